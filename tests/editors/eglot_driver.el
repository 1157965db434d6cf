;;; eglot_driver.el --- Batch Emacs + eglot with editors/emacs/acp-lsp.el  -*- lexical-binding: t; -*-
;; `eglot-ensure' never fires in batch mode (it waits for the command loop), so
;; this connects the way M-x eglot does, with the guessed contact.
(package-activate-all)  ; as an interactive Emacs does at startup; batch skips it
(require 'eglot)
(load (getenv "ACP_EMACS_CONFIG") nil t)
(add-hook 'project-find-functions #'acp-lsp-project-find)  ; as its README says
(load (expand-file-name "emacs_session.el" (file-name-directory load-file-name)) nil t)

;; Eglot 1.9 has no handler for $/progress (it does not announce the
;; capability); record anything that arrives all the same.
(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql $/progress)) &key value &allow-other-keys)
  (acp-test-note-progress (plist-get value :kind)))

;; `eglot--connect' waits `eglot-sync-connect' (3 s) for the answer to
;; initialize; a slower server is connected in the background and the call
;; returns nil, so wait for the buffer's server to appear.
(acp-test-run (lambda ()
                (let ((server (apply #'eglot--connect (eglot--guess-contact))))
                  (unless server
                    (acp-test--wait 20 #'eglot-current-server)
                    (setq server (or (eglot-current-server)
                                     (error "eglot never connected to the server"))))
                  (flymake-start)
                  (list (list (jsonrpc-name server)
                              (project-root (eglot--project server))))))
              'eglot-error 'eglot-warning)
