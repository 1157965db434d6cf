;;; eglot_driver.el --- Drive a batch Emacs + eglot with the shipped config  -*- lexical-binding: t; -*-
;; Opens a file of the demo project, connects eglot, saves, waits for flymake's
;; diagnostics and writes what Emacs holds to $ACP_RESULT_FILE as JSON.
;; `eglot-ensure' never fires in batch mode (it waits for the command loop),
;; so this connects the way M-x eglot would, with the guessed contact.
(require 'eglot)
(require 'json)
(load (getenv "ACP_EMACS_CONFIG") nil t)

(defun acp-test--diagnostics ()
  (mapcar (lambda (d)
            (let ((beg (flymake-diagnostic-beg d)))
              (save-excursion
                (goto-char beg)
                `((line . ,(1- (line-number-at-pos beg)))
                  (column . ,(- beg (line-beginning-position)))
                  (type . ,(symbol-name (flymake-diagnostic-type d)))
                  (text . ,(flymake-diagnostic-text d))))))
          (flymake-diagnostics)))

(defun acp-test--has (type)
  (seq-some (lambda (d) (eq (flymake-diagnostic-type d) type)) (flymake-diagnostics)))

(let ((result '()))
  (condition-case err
      (progn
        (find-file (getenv "ACP_DEMO_FILE"))
        (let ((server (apply #'eglot--connect (eglot--guess-contact))))
          (push `(server . ,(jsonrpc-name server)) result))
        (flymake-start)
        ;; runOn = save: the save starts the validation run.  An unmodified
        ;; buffer is not written (so no didSave): mark it modified first.
        (set-buffer-modified-p t)
        (save-buffer)
        (let ((deadline (+ (float-time) 20)))
          (while (and (< (float-time) deadline)
                      (not (and (acp-test--has 'eglot-error) (acp-test--has 'eglot-warning))))
            (accept-process-output nil 0.05)))
        (push `(diagnostics . ,(vconcat (acp-test--diagnostics))) result))
    (error (push `(error . ,(error-message-string err)) result)))
  (with-temp-file (getenv "ACP_RESULT_FILE")
    (insert (json-encode result)))
  (kill-emacs 0))
