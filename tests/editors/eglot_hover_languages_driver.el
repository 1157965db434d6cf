;;; eglot_hover_languages_driver.el --- Batch Emacs + eglot: hover in JS and shell  -*- lexical-binding: t; -*-
;; Open $ACP_FILE (a JavaScript or shell file) with editors/emacs/acp-lsp.el,
;; connect as M-x eglot does, save (runOn = save: $ACP_VALIDATION runs), wait
;; for eglot's diagnostic on $ACP_LINE, then ask eglot's eldoc hover function
;; at $ACP_LINE, $ACP_COLUMN (0-based, characters) and write what eldoc would
;; show to $ACP_RESULT_FILE as JSON, with the buffer's major mode and the
;; languageId eglot announced the file with.
(package-activate-all)  ; markdown-mode too: eglot then takes Markdown hovers
(load (getenv "ACP_EMACS_CONFIG") nil t)
(require 'eglot)
;; acp-lsp.el serves `acp-lsp-major-modes', by default Python and TOML only:
;; in js-mode and sh-mode eglot would start typescript-language-server and
;; bash-language-server.  Add the modes as its README says, after eglot has
;; loaded (the harder case: eglot must still see the change).
(customize-set-variable 'acp-lsp-major-modes
                        (append acp-lsp-major-modes '(js-mode sh-mode)))
(require 'eldoc)
(add-hook 'project-find-functions #'acp-lsp-project-find)  ; as its README says
(load (expand-file-name "emacs_session.el" (file-name-directory load-file-name)) nil t)

(defun acp-hover--at (line column)
  "What eglot's eldoc hover function reports at LINE and COLUMN (:none: nothing)."
  (goto-char (point-min))
  (forward-line line)
  (forward-char column)
  (let ((doc nil))
    (eglot-hover-eldoc-function (lambda (info &rest _) (setq doc (or info :none))))
    (acp-test--wait 5 (lambda () doc))
    (if (stringp doc) (substring-no-properties doc) (symbol-name (or doc :timeout)))))

(defun acp-hover--eglot-diagnostics (line)
  "Eglot's flymake diagnostics on LINE (0-based); sh-mode's own backend is not eglot's."
  (seq-filter (lambda (d) (and (memq (flymake-diagnostic-type d)
                                     '(eglot-error eglot-warning eglot-note))
                               (= (1- (line-number-at-pos (flymake-diagnostic-beg d))) line)))
              (flymake-diagnostics)))

(let ((result '())
      (line (string-to-number (getenv "ACP_LINE")))
      (column (string-to-number (getenv "ACP_COLUMN")))
      (wanted (getenv "ACP_MESSAGE")))
  (condition-case err
      (progn
        (find-file (getenv "ACP_FILE"))
        (push `(major-mode . ,(symbol-name major-mode)) result)
        (let ((server (apply #'eglot--connect (eglot--guess-contact))))
          (acp-test--wait 10 #'eglot-current-server)
          (setq server (or server (eglot-current-server)
                           (error "eglot never connected to a server")))
          (push `(server . ,(plist-get (eglot--server-info server) :name)) result)
          (push `(language-id . ,(eglot--language-id server)) result))
        (flymake-start)
        (set-buffer-modified-p t)  ; an unmodified buffer is not written: no didSave
        (save-buffer)
        (acp-test--wait 15 (lambda () (acp-hover--eglot-diagnostics line)))
        (push `(diagnostics . ,(vconcat (mapcar #'flymake-diagnostic-text
                                                (acp-hover--eglot-diagnostics line))))
              result)
        (push `(eldoc-hooked . ,(if (memq #'eglot-hover-eldoc-function
                                          eldoc-documentation-functions)
                                    t :json-false))
              result)
        ;; The diagnostic and the hover come from the same result; ask again
        ;; only if the first answer did not hold the finding yet.
        (let ((deadline (+ (float-time) 8))
              (shown nil))
          (while (progn (setq shown (acp-hover--at line column))
                        (and (not (string-search wanted shown))
                             (< (float-time) deadline))))
          (push `(hover . ,shown) result)))
    (error (push `(error . ,(error-message-string err)) result)))
  (with-temp-file (getenv "ACP_RESULT_FILE")
    (insert (json-encode result)))
  (kill-emacs 0))
