;;; eglot_code_action_driver.el --- Batch Emacs + eglot: the demo's code actions  -*- lexical-binding: t; -*-
;; Open inventory.py of the demo, connect eglot with editors/emacs/acp-lsp.el,
;; save (the run shows ruff's findings), list the code actions on the unused
;; import's line as `M-x eglot-code-actions' does, then run "Fix with ruff"
;; (eglot has no codeAction/resolve: the server applies it through
;; workspace/applyEdit). Writes what Emacs holds to $ACP_RESULT_FILE as JSON.
(package-activate-all)
(require 'eglot)
(require 'json)
(load (getenv "ACP_EMACS_CONFIG") nil t)
(load (expand-file-name "emacs_session.el" (file-name-directory load-file-name)) nil t)

(setq eglot-confirm-server-initiated-edits nil)  ; batch mode cannot answer a prompt

(defun acp-test--import-line ()
  (save-excursion
    (goto-char (point-min))
    (when (re-search-forward "^import os$" nil t)
      (line-beginning-position))))

(let ((result '()))
  (condition-case err
      (progn
        (find-file (getenv "ACP_DEMO_FILE"))
        (let ((server (apply #'eglot--connect (eglot--guess-contact))))
          (acp-test--wait 15 (lambda () (eglot-current-server)))
          (set-buffer-modified-p t)
          (save-buffer)
          (acp-test--wait 20 (lambda ()
                               (let ((beg (acp-test--import-line)))
                                 (and beg (flymake-diagnostics beg (save-excursion
                                                                     (goto-char beg)
                                                                     (line-end-position)))))))
          (let* ((beg (acp-test--import-line))
                 (end (save-excursion (goto-char beg) (line-end-position)))
                 (actions (eglot-code-actions beg end)))
            (push `(titles . ,(vconcat (mapcar (lambda (a) (plist-get a :title)) actions))) result)
            (let ((fix (seq-find (lambda (a) (string-prefix-p "Fix with ruff" (plist-get a :title)))
                                 actions)))
              (when fix
                (eglot-execute-command (or server (eglot-current-server))
                                       (plist-get (plist-get fix :command) :command)
                                       (plist-get (plist-get fix :command) :arguments))
                (acp-test--wait 10 (lambda () (null (acp-test--import-line))))
                (push `(fixed . ,(if (acp-test--import-line) :json-false t)) result)
                (push `(modified . ,(if (buffer-modified-p) t :json-false)) result))))))
    (error (push `(error . ,(error-message-string err)) result)))
  (with-temp-file (getenv "ACP_RESULT_FILE")
    (insert (json-encode result)))
  (kill-emacs 0))
