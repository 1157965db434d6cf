;;; lsp_mode_driver.el --- Batch Emacs + lsp-mode with editors/emacs/acp-lsp.el  -*- lexical-binding: t; -*-
(package-activate-all)  ; as an interactive Emacs does at startup; batch skips it
(require 'lsp-mode)
(load (getenv "ACP_EMACS_CONFIG") nil t)
(add-hook 'project-find-functions #'acp-lsp-project-find)  ; as its README says
(load (expand-file-name "emacs_session.el" (file-name-directory load-file-name)) nil t)

(setq lsp-session-file (expand-file-name "lsp-session" (getenv "HOME"))
      lsp-auto-guess-root t               ; no interactive "import project?" question
      lsp-diagnostics-provider :flymake
      lsp-enable-file-watchers nil
      lsp-restart 'ignore)

(advice-add 'lsp-on-progress-modeline :after
            (lambda (_workspace params)
              (acp-test-note-progress (lsp-get (lsp-get params :value) :kind))))

(acp-test-run (lambda ()
                (lsp)
                (acp-test--wait 15 (lambda ()
                                     (seq-some (lambda (w)
                                                 (eq (lsp--workspace-status w) 'initialized))
                                               (lsp-workspaces))))
                (mapcar (lambda (w) (list (symbol-name (lsp--workspace-server-id w))
                                          (lsp--workspace-root w)))
                        (lsp-workspaces)))
              :error :warning)
