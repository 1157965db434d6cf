;;; eglot_confirm_driver.el --- Batch Emacs + eglot: confirming server-initiated edits  -*- lexical-binding: t; -*-
;; What editors/emacs/README.md says about "Server wants to edit … Proceed?":
;; eglot 1.9 has no codeAction/resolve, so "Fix with ruff" reaches it as a
;; command and acp-lsp sends the edit with workspace/applyEdit, which eglot
;; confirms unless `eglot-confirm-server-initiated-edits' is nil.
;;
;; Open the demo's inventory.py, connect eglot with editors/emacs/acp-lsp.el,
;; save (the run shows ruff's unused import), then pick "Fix with ruff" as
;; `M-x eglot-code-actions' does, with `y-or-n-p' and `yes-or-no-p' answered
;; (and their prompts recorded) by this driver:
;;   $ACP_CONFIRM = "default": eglot's own default; answer no, then yes.
;;   $ACP_CONFIRM = "nil": (setq eglot-confirm-server-initiated-edits nil)
;;     as the README says; then, as a probe of eglot alone, the edit a server
;;     would send for a file no buffer visits (greetings.py), answered no.
;; Writes what Emacs holds to $ACP_RESULT_FILE as JSON.
(package-activate-all)
(require 'eglot)
(require 'cl-lib)
(require 'json)
(require 'lisp-mnt)
(load (getenv "ACP_EMACS_CONFIG") nil t)
(load (expand-file-name "emacs_session.el" (file-name-directory load-file-name)) nil t)

(defvar acp-test--answer nil "What the next prompt is answered.")
(defvar acp-test--prompts '() "Each prompt asked: (FUNCTION . TEXT), newest first.")

(defun acp-test--ask (function prompt)
  (push (cons function (substring-no-properties prompt)) acp-test--prompts)
  acp-test--answer)

;; Advice, not a dynamic binding: the prompt comes from eglot's handler of the
;; server's request, run from the process filter.
(advice-add 'y-or-n-p :override (lambda (prompt &rest _) (acp-test--ask "y-or-n-p" prompt))
            '((name . acp-test)))
(advice-add 'yes-or-no-p :override (lambda (prompt &rest _) (acp-test--ask "yes-or-no-p" prompt))
            '((name . acp-test)))

(defun acp-test--eglot-version ()
  (let ((desc (cadr (assq 'eglot package-alist))))
    (if desc
        (package-version-join (package-desc-version desc))
      (lm-version (concat (file-name-sans-extension (locate-library "eglot")) ".el")))))

(defun acp-test--import-line ()
  (save-excursion
    (goto-char (point-min))
    (when (re-search-forward "^import os$" nil t)
      (line-beginning-position))))

(defun acp-test--eglot-diagnostic-p (beg)
  "Non-nil once eglot (not python-mode's own backend) flags the line at BEG."
  (seq-some (lambda (d) (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d))))
            (flymake-diagnostics beg (save-excursion (goto-char beg) (line-end-position)))))

(defun acp-test--json-bool (value)
  (if value t :json-false))

(defun acp-test--asked ()
  "The prompts asked since the last step, oldest first, for JSON."
  (vconcat (mapcar (lambda (p) `((function . ,(car p)) (text . ,(cdr p))))
                   (reverse acp-test--prompts))))

(defun acp-test--fix (answer)
  "Pick \"Fix with ruff\" on the import's line as `M-x eglot-code-actions'
does, prompts answered ANSWER; what it did, as an alist."
  (setq acp-test--answer answer
        acp-test--prompts '())
  (let* ((beg (acp-test--import-line))
         (end (save-excursion (goto-char beg) (line-end-position)))
         (picked nil)
         (outcome nil))
    (cl-letf* (((symbol-function 'completing-read)
                (lambda (_prompt collection &rest _)
                  (setq picked (seq-find (lambda (title) (string-prefix-p "Fix with ruff" title))
                                         (mapcar #'car collection)))))
               ;; A keyboard event: eglot offers a completing-read menu, not a popup.
               (last-nonmenu-event ?\r))
      (setq outcome (eglot-code-actions beg end nil t)))
    (when answer  ; the edit lands while eglot waits for the command's answer
      (acp-test--wait 10 (lambda () (null (acp-test--import-line)))))
    `((picked . ,picked)
      (applied . ,(acp-test--json-bool (eq (plist-get outcome :applied) t)))
      (prompts . ,(acp-test--asked))
      (import_line . ,(acp-test--json-bool (acp-test--import-line)))
      (modified . ,(acp-test--json-bool (buffer-modified-p)))
      (text . ,(buffer-substring-no-properties (point-min) (point-max))))))

(defun acp-test--unvisited-edit (server)
  "Hand eglot the workspace/applyEdit a server would send for greetings.py,
which no buffer visits; answered no.  What eglot asked, as an alist."
  (setq acp-test--answer nil
        acp-test--prompts '())
  (let* ((file (expand-file-name "greetings.py" (file-name-directory (buffer-file-name))))
         (uri (intern (concat ":" (eglot--path-to-uri file))))
         (edit `(:changes (,uri [(:range (:start (:line 0 :character 0) :end (:line 0 :character 0))
                                  :newText "# probe\n")])))
         (refused nil))
    (condition-case nil
        (eglot-handle-request server 'workspace/applyEdit :edit edit)
      (jsonrpc-error (setq refused t)))
    `((visited . ,(acp-test--json-bool (find-buffer-visiting file)))
      (refused . ,(acp-test--json-bool refused))
      (prompts . ,(acp-test--asked)))))

(let ((result '())
      (mode (getenv "ACP_CONFIRM")))
  (condition-case err
      (progn
        (push `(eglot_version . ,(acp-test--eglot-version)) result)
        (push `(bound . ,(acp-test--json-bool (boundp 'eglot-confirm-server-initiated-edits))) result)
        (push `(later_name_bound . ,(acp-test--json-bool (boundp 'eglot-confirm-server-edits))) result)
        (push `(standard_value
                . ,(format "%S" (eval (car (get 'eglot-confirm-server-initiated-edits
                                                'standard-value))
                                      t)))
              result)
        (when (equal mode "nil")
          (setq eglot-confirm-server-initiated-edits nil))
        (push `(value . ,(format "%S" eglot-confirm-server-initiated-edits)) result)
        (find-file (getenv "ACP_DEMO_FILE"))
        (remove-hook 'flymake-diagnostic-functions #'python-flymake t)
        (push `(original . ,(buffer-substring-no-properties (point-min) (point-max))) result)
        (let ((server (apply #'eglot--connect (eglot--guess-contact))))
          (acp-test--wait 15 (lambda () (eglot-current-server)))
          (set-buffer-modified-p t)
          (save-buffer)
          (acp-test--wait 20 (lambda ()
                               (let ((beg (acp-test--import-line)))
                                 (and beg (acp-test--eglot-diagnostic-p beg)))))
          (if (equal mode "nil")
              (progn
                (push `(fix . ,(acp-test--fix t)) result)
                (push `(unvisited . ,(acp-test--unvisited-edit (or server (eglot-current-server))))
                      result))
            (push `(refused . ,(acp-test--fix nil)) result)
            (push `(accepted . ,(acp-test--fix t)) result))))
    (error (push `(error . ,(error-message-string err)) result)))
  (with-temp-file (getenv "ACP_RESULT_FILE")
    (insert (json-encode result)))
  (kill-emacs 0))
