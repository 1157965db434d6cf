;;; emacs_session.el --- The session both Emacs drivers run  -*- lexical-binding: t; -*-
;; Open $ACP_DEMO_FILE, connect with the client under test, save the file
;; (runOn = save starts the validation run), wait for flymake to hold both an
;; error and a warning, and write what Emacs holds to $ACP_RESULT_FILE as JSON.
(require 'json)
(require 'seq)
(require 'flymake)

(defvar acp-test--progress-kinds '()
  "The `kind' of every $/progress value the client under test received.")

(defun acp-test-note-progress (kind)
  "Record KIND; each driver calls this from its client's $/progress handler."
  (push kind acp-test--progress-kinds))

(defun acp-test--wait (seconds condition)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (< (float-time) deadline) (not (funcall condition)))
      (accept-process-output nil 0.05))))

(defun acp-test--has (type)
  (seq-some (lambda (d) (eq (flymake-diagnostic-type d) type)) (flymake-diagnostics)))

(defun acp-test--diagnostics ()
  "Flymake's diagnostics; columns count characters (code points)."
  (mapcar (lambda (d)
            (let ((beg (flymake-diagnostic-beg d)))
              (save-excursion
                (goto-char beg)
                `((line . ,(1- (line-number-at-pos beg)))
                  (column . ,(- beg (line-beginning-position)))
                  (type . ,(symbol-name (flymake-diagnostic-type d)))
                  (text . ,(flymake-diagnostic-text d))))))
          (flymake-diagnostics)))

(defun acp-test-run (connect error-type warning-type)
  "Run the session.  CONNECT starts the client in the current buffer and
returns the servers it runs, each a list (NAME ROOT); ERROR-TYPE and WARNING-TYPE are
the client's flymake diagnostic types."
  (let ((result '()))
    (condition-case err
        (progn
          (find-file (getenv "ACP_DEMO_FILE"))
          ;; Only acp-lsp's diagnostics count: python-mode's own flymake backend
          ;; runs pyflakes when it is installed (flake8, a test dependency, brings it).
          (remove-hook 'flymake-diagnostic-functions #'python-flymake t)
          (push `(servers . ,(vconcat (mapcar (lambda (server)
                                                  `((name . ,(car server))
                                                    (root . ,(cadr server))))
                                                (funcall connect))))
                result)
          ;; Saved at once: a save before the backend connects still runs.
          ;; An unmodified buffer is not written (so no didSave): mark it first.
          (set-buffer-modified-p t)
          (save-buffer)
          ;; $ACP_ERROR_ONLY: a file that gets an error and nothing else.
          (acp-test--wait 20 (lambda () (and (acp-test--has error-type)
                                             (or (getenv "ACP_ERROR_ONLY")
                                                 (acp-test--has warning-type)))))
          (push `(diagnostics . ,(vconcat (acp-test--diagnostics))) result)
          (when acp-test--progress-kinds  ; a run that reports progress also ends it
            (acp-test--wait 5 (lambda () (equal (car acp-test--progress-kinds) "end"))))
          (push `(progress . ,(vconcat (reverse acp-test--progress-kinds))) result))
      (error (push `(error . ,(error-message-string err)) result)))
    (with-temp-file (getenv "ACP_RESULT_FILE")
      (insert (json-encode result)))
    (kill-emacs 0)))
