;;; eglot_completion_driver.el --- Batch Emacs + eglot: completion-at-point  -*- lexical-binding: t; -*-
;; Open $ACP_DEMO_FILE with editors/emacs/acp-lsp.el, connect as M-x eglot
;; does, type where completion is wanted, and ask eglot's capf
;; (`eglot-completion-at-point', what C-M-i, company and corfu call) for its
;; candidates, as `completion-at-point' does: `all-completions' of the text
;; between its bounds, in its display order.  $ACP_SCENARIO says where:
;;   toml: a new [[validations]] table at the end of acp.toml, `preset = "';
;;   noqa: save (ruff runs), then `  # noqa: ' after the line of the finding
;;         coded $ACP_CODE.
;; Then `completion-at-point' itself, with the candidate's first characters
;; typed ($ACP_TYPED), writes it.  What Emacs holds goes to $ACP_RESULT_FILE.
(package-activate-all)
(require 'eglot)
(load (getenv "ACP_EMACS_CONFIG") nil t)
(add-hook 'project-find-functions #'acp-lsp-project-find)  ; as its README says
(load (expand-file-name "emacs_session.el" (file-name-directory load-file-name)) nil t)

(defun acp-completion--candidates ()
  "What eglot's capf offers at point: (CANDIDATES . ANNOTATIONS), the
candidates sorted as the *Completions* buffer shows them."
  (pcase (eglot-completion-at-point)
    (`(,beg ,end ,table . ,props)
     (let* ((probe (buffer-substring-no-properties beg end))
            (found (all-completions probe table))
            (sort (completion-metadata-get (completion-metadata probe table nil)
                                           'display-sort-function))
            (annotate (plist-get props :annotation-function))
            (sorted (if sort (funcall sort found) found)))
       (cons (mapcar #'substring-no-properties sorted)
             (mapcar (lambda (c) (cons (substring-no-properties c)
                                       (string-trim (or (funcall annotate c) ""))))
                     sorted))))))

(defun acp-completion--until-offered ()
  "The candidates at point once the server offers any (10 s at most): it
answers nothing until it has listed the resource.  Counts the empty answers."
  (let ((deadline (+ (float-time) 10)) (empty 0) offered)
    (while (and (null (car (setq offered (acp-completion--candidates))))
                (< (float-time) deadline))
      (setq empty (1+ empty))
      (accept-process-output nil 0.1))
    (list offered empty)))

(defun acp-completion--line ()
  (buffer-substring-no-properties (line-beginning-position) (line-end-position)))

(defun acp-completion--finding (code)
  "The start of the line of the flymake diagnostic whose text names CODE."
  (seq-some (lambda (d)
              (when (string-match-p (regexp-quote code) (flymake-diagnostic-text d))
                (save-excursion (goto-char (flymake-diagnostic-beg d))
                                (line-beginning-position))))
            (flymake-diagnostics)))

(let ((result '()))
  (condition-case err
      (progn
        (find-file (getenv "ACP_DEMO_FILE"))
        (remove-hook 'flymake-diagnostic-functions #'python-flymake t)  ; acp-lsp's only
        (apply #'eglot--connect (eglot--guess-contact))
        (acp-test--wait 15 (lambda () (eglot-current-server)))
        (unless (eglot-current-server) (error "eglot never connected to the server"))
        (if (equal (getenv "ACP_SCENARIO") "toml")
            (progn
              (goto-char (point-max))
              (insert "\n[[validations]]\npreset = \""))
          (set-buffer-modified-p t)
          (save-buffer)  ; runOn = save: ruff runs
          (let ((code (getenv "ACP_CODE")))
            (acp-test--wait 20 (lambda () (acp-completion--finding code)))
            (goto-char (or (acp-completion--finding code)
                           (error "ruff never reported %s" code)))
            (push `(line-before . ,(acp-completion--line)) result)
            (push `(line-number . ,(1- (line-number-at-pos))) result)
            (end-of-line)
            (insert "  # noqa: ")))
        (pcase-let ((`((,candidates . ,annotations) ,empty) (acp-completion--until-offered)))
          (push `(empty-answers . ,empty) result)
          (push `(candidates . ,(vconcat candidates)) result)
          (push `(annotations . ,annotations) result))
        (insert (getenv "ACP_TYPED"))
        (push `(completed . ,(if (completion-at-point) t :json-false)) result)
        (push `(line . ,(acp-completion--line)) result))
    (error (push `(error . ,(error-message-string err)) result)))
  (with-temp-file (getenv "ACP_RESULT_FILE")
    (insert (json-encode result)))
  (kill-emacs 0))
