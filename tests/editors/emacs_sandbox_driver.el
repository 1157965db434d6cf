;;; emacs_sandbox_driver.el --- A plan's sandbox copy in batch Emacs  -*- lexical-binding: t; -*-
;; With $ACP_EMACS_CLIENT (eglot or lsp-mode) and editors/emacs/acp-lsp.el
;; loaded as its README says: open $ACP_DEMO_FILE, connect, save and wait for
;; the findings; then open the plan's sandbox copy $ACP_SANDBOX_FILE and do
;; what the user's mode hook does there (`eglot-ensure' connects unless the
;; buffer is already managed; `lsp').  Writes the servers, the acp-lsp
;; processes, what the copy is attached to and both buffers' diagnostics to
;; $ACP_RESULT_FILE as JSON.
(package-activate-all)
(defvar acp-test-client (intern (getenv "ACP_EMACS_CLIENT")))
(require (if (eq acp-test-client 'eglot) 'eglot 'lsp-mode))
(load (getenv "ACP_EMACS_CONFIG") nil t)
(add-hook 'project-find-functions #'acp-lsp-project-find)  ; as its README says
(load (expand-file-name "emacs_session.el" (file-name-directory load-file-name)) nil t)

(defvar lsp-session-file)
(defvar lsp-auto-guess-root)
(defvar lsp-diagnostics-provider)
(defvar lsp-enable-file-watchers)
(defvar lsp-restart)
(setq lsp-session-file (expand-file-name "lsp-session" (getenv "HOME"))
      lsp-auto-guess-root t               ; no interactive "import project?" question
      lsp-diagnostics-provider :flymake
      lsp-enable-file-watchers nil
      lsp-restart 'ignore)

(defun acp-test--connect ()
  "What the mode hook does in the current buffer; the error it gave, if any."
  (remove-hook 'flymake-diagnostic-functions #'python-flymake t)
  (condition-case err
      (progn
        (if (eq acp-test-client 'eglot)
            (unless eglot--managed-mode  ; `eglot-ensure'
              (apply #'eglot--connect (eglot--guess-contact)))
          (lsp))
        (when (bound-and-true-p flymake-mode) (flymake-start))
        nil)
    (error (error-message-string err))))

(defun acp-test--servers ()
  "Every running server of the client under test: (NAME ROOT)."
  (if (eq acp-test-client 'eglot)
      (let (found)
        (maphash (lambda (project servers)
                   (dolist (server servers)
                     (push (list (plist-get (eglot--server-info server) :name)
                                 (project-root project))
                           found)))
                 eglot--servers-by-project)
        found)
    (mapcar (lambda (w) (list (symbol-name (lsp--workspace-server-id w)) (lsp--workspace-root w)))
            (lsp--session-workspaces (lsp-session)))))

(defun acp-test--joined ()
  "The servers the current buffer is attached to: (NAME ROOT)."
  (if (eq acp-test-client 'eglot)
      (when-let ((server (and eglot--managed-mode (eglot-current-server))))
        (list (list (plist-get (eglot--server-info server) :name)
                    (project-root (eglot--project server)))))
    (mapcar (lambda (w) (list (symbol-name (lsp--workspace-server-id w)) (lsp--workspace-root w)))
            lsp--buffer-workspaces)))

(defun acp-test--processes ()
  "The live acp-lsp processes Emacs started."
  (seq-filter (lambda (process)
                (and (process-live-p process)
                     (seq-some (lambda (arg) (string-match-p "acp-lsp" arg))
                               (process-command process))))
              (process-list)))

(defun acp-test--settled (buffer)
  "Wait until BUFFER has diagnostics that stay the same for a second."
  (with-current-buffer buffer
    (let ((last nil) (since (float-time)) (deadline (+ (float-time) 20)))
      (while (and (< (float-time) deadline)
                  (or (null last) (< (- (float-time) since) 1.0)))
        (accept-process-output nil 0.05)
        (let ((now (acp-test--diagnostics)))
          (unless (equal now last)
            (setq last now since (float-time)))))
      last)))

(let ((result '()))
  (condition-case err
      (let ((real (and (getenv "ACP_DEMO_FILE") (find-file-noselect (getenv "ACP_DEMO_FILE"))))
            copy)
        (when real  ; without it: the copy alone, no server running
          (with-current-buffer real
            (let ((failed (acp-test--connect)))
              (when failed (error "connecting %s: %s" (buffer-name) failed)))
            (acp-test--wait 15 (lambda ()
                                 (if (eq acp-test-client 'eglot)
                                     (eglot-current-server)
                                   (seq-some (lambda (w) (eq (lsp--workspace-status w) 'initialized))
                                             (lsp-workspaces)))))
            (when (bound-and-true-p flymake-mode) (flymake-start))
            (set-buffer-modified-p t)
            (save-buffer))
          (push `(before . ,(vconcat (acp-test--settled real))) result))
        ;; The copy, as "Preview plan" opens it (eglot 1.9 and lsp-mode 8.0
        ;; have no window/showDocument: the user opens it by hand).
        (setq copy (find-file (getenv "ACP_SANDBOX_FILE")))
        (with-current-buffer copy
          (push `(copy_connect_error . ,(acp-test--connect)) result))
        (with-current-buffer copy
          (acp-test--wait (if real 10 1) (lambda () (acp-test--diagnostics))))
        (acp-test--wait 2 #'ignore)  ; a second server would publish by now
        (push `(copy . ,(vconcat (with-current-buffer copy (acp-test--diagnostics)))) result)
        (when real
          (push `(after . ,(vconcat (with-current-buffer real (acp-test--diagnostics)))) result)
          (push `(real_joined . ,(vconcat (mapcar #'vconcat (with-current-buffer real (acp-test--joined)))))
                result))
        (push `(copy_joined . ,(vconcat (mapcar #'vconcat (with-current-buffer copy (acp-test--joined)))))
              result)
        (push `(servers . ,(vconcat (mapcar #'vconcat (acp-test--servers)))) result)
        (push `(processes . ,(length (acp-test--processes))) result)
        (push `(copy_read_only . ,(with-current-buffer copy (and buffer-read-only t))) result)
        ;; $ACP_LATER_FILE: a file of the project opened after the copy alone.
        (when-let ((later (getenv "ACP_LATER_FILE")))
          (with-current-buffer (find-file-noselect later)
            (acp-test--connect)
            (acp-test--wait 15 (lambda () (acp-test--joined))))
          (with-current-buffer copy
            (acp-test--wait 5 (lambda () (acp-test--joined)))
            (push `(copy_joined_later . ,(vconcat (mapcar #'vconcat (acp-test--joined)))) result))))
    (error (push `(error . ,(error-message-string err)) result)))
  (with-temp-file (getenv "ACP_RESULT_FILE")
    (insert (json-encode result)))
  (kill-emacs 0))
