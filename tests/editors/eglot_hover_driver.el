;;; eglot_hover_driver.el --- Batch Emacs + eglot: hover through eldoc  -*- lexical-binding: t; -*-
;; Open $ACP_DEMO_FILE with editors/emacs/acp-lsp.el, connect as M-x eglot does,
;; save (ruff runs), wait for the Error, then ask eglot's eldoc hover function
;; at the typo ($ACP_TYPO_LINE, $ACP_TYPO_COLUMN: 0-based, characters) and on
;; the first line, and write what eldoc would show to $ACP_RESULT_FILE as JSON.
(package-activate-all)  ; markdown-mode too: eglot then takes Markdown hovers
(require 'eglot)
(require 'eldoc)
(load (getenv "ACP_EMACS_CONFIG") nil t)
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

(let ((result '()))
  (condition-case err
      (progn
        (find-file (getenv "ACP_DEMO_FILE"))
        (apply #'eglot--connect (eglot--guess-contact))
        (acp-test--wait 15 (lambda () (eglot-current-server)))
        (set-buffer-modified-p t)
        (save-buffer)
        (acp-test--wait 20 (lambda () (acp-test--has 'eglot-error)))
        (push `(eldoc-hooked . ,(if (memq #'eglot-hover-eldoc-function
                                          eldoc-documentation-functions)
                                    t :json-false))
              result)
        (push `(typo . ,(acp-hover--at (string-to-number (getenv "ACP_TYPO_LINE"))
                                       (string-to-number (getenv "ACP_TYPO_COLUMN"))))
              result)
        (push `(plain . ,(acp-hover--at 0 0)) result))
    (error (push `(error . ,(error-message-string err)) result)))
  (with-temp-file (getenv "ACP_RESULT_FILE")
    (insert (json-encode result)))
  (kill-emacs 0))
