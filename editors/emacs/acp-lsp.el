;;; acp-lsp.el --- Use acp-lsp from eglot or lsp-mode  -*- lexical-binding: t; -*-

;; Load from your init file: (load "/path/to/acp-lsp/editors/emacs/acp-lsp.el")
;; then M-x eglot (or `eglot-ensure' in a mode hook), or M-x lsp with lsp-mode.
;; Eglot is built into Emacs 29; on Emacs 28 install it from ELPA first.

;;; Code:

(defgroup acp-lsp nil
  "ACP validation findings, plans and provenance through acp-lsp."
  :group 'tools)

(defcustom acp-lsp-command '("acp-lsp")
  "Command line starting the server.
Append \"--data-dir\" DIR, or \"--acp\" URL \"--token-file\" FILE, to use
another backend."
  :type '(repeat string))

(defcustom acp-lsp-major-modes '(python-mode python-ts-mode conf-toml-mode toml-ts-mode)
  "Major modes whose buffers acp-lsp serves.
Validations cover any file of a registered resource: add the modes of the
files your acp.toml validates.  TOML is there for acp.toml itself, where
results without a file location are shown."
  :type '(repeat symbol))

(defcustom acp-lsp-settings nil
  "Server settings (the `acp' section) as a plist, e.g. (:runOn \"change\").
Nil keeps the server's defaults.  Every setting is listed in docs/editors.md."
  :type 'plist)

(defun acp-lsp-project-find (dir)
  "The project of DIR: the nearest directory above it holding acp.toml.
For `project-find-functions', so that eglot and lsp-mode take that folder
as the server's root rather than an enclosing git repository's."
  (when-let ((root (locate-dominating-file dir "acp.toml")))
    (cons 'transient (expand-file-name root))))

(defun acp-lsp--contact (&optional _interactive)
  "The eglot contact: the command and, when set, the settings."
  (append acp-lsp-command
          (when acp-lsp-settings
            (list :initializationOptions (list :acp acp-lsp-settings)))))

;;;; eglot.  Eglot runs one server per buffer: in these modes acp-lsp
;;;; replaces any other language server eglot would start.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs (cons acp-lsp-major-modes #'acp-lsp--contact)))

;;;; lsp-mode.  An add-on client: it runs next to the mode's usual server.
(declare-function lsp-register-client "lsp-mode")
(declare-function make-lsp-client "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode")
(with-eval-after-load 'lsp-mode
  (lsp-register-client
   (make-lsp-client
    :server-id 'acp-lsp
    :new-connection (lsp-stdio-connection (lambda () acp-lsp-command))
    ;; Only below an acp.toml: elsewhere nothing is validated, and lsp-mode's
    ;; flymake would wait for diagnostics that never come.
    :activation-fn (lambda (file-name mode)
                     (and file-name
                          (memq mode acp-lsp-major-modes)
                          (locate-dominating-file file-name "acp.toml")))
    :add-on? t
    :initialization-options (lambda () (when acp-lsp-settings (list :acp acp-lsp-settings))))))

(provide 'acp-lsp)
;;; acp-lsp.el ends here
