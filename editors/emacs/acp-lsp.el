;;; acp-lsp.el --- Use acp-lsp from eglot or lsp-mode  -*- lexical-binding: t; -*-

;; Load from your init file: (load "/path/to/acp-lsp/editors/emacs/acp-lsp.el")
;; then M-x eglot (or `eglot-ensure' in a mode hook), or M-x lsp with lsp-mode.
;; Eglot is built into Emacs 29; on Emacs 28 install it from ELPA first.

;;; Code:

(require 'seq)
(require 'subr-x)

(defgroup acp-lsp nil
  "ACP validation findings, plans and provenance through acp-lsp."
  :group 'tools)

(defcustom acp-lsp-command '("acp-lsp")
  "Command line starting the server.
Append \"--data-dir\" DIR, or \"--acp\" URL \"--token-file\" FILE, to use
another backend."
  :type '(repeat string))

(defvar eglot-server-programs)
(defvar acp-lsp-major-modes)

(defun acp-lsp--register-eglot ()
  "Make eglot start acp-lsp in `acp-lsp-major-modes' (once eglot is loaded)."
  (when (boundp 'eglot-server-programs)
    (setq eglot-server-programs
          (cons (cons acp-lsp-major-modes #'acp-lsp--contact)
                (seq-remove (lambda (entry) (eq (cdr-safe entry) #'acp-lsp--contact))
                            eglot-server-programs)))))

(defcustom acp-lsp-major-modes '(python-mode python-ts-mode conf-toml-mode toml-ts-mode)
  "Major modes whose buffers acp-lsp serves.
Validations cover any file of a registered resource: add the modes of the
files your acp.toml validates, e.g. `js-mode' and `sh-mode' for eslint and
shellcheck.  TOML is there for acp.toml itself, where results without a
file location are shown.  Set it with `customize-set-variable' (or `setq'
before this file loads) so that eglot sees the change."
  :type '(repeat symbol)
  :set (lambda (symbol value)
         (set-default symbol value)
         (acp-lsp--register-eglot)))

(defcustom acp-lsp-settings nil
  "Server settings (the `acp' section) as a plist, e.g. (:runOn \"change\").
Nil keeps the server's defaults.  Every setting is listed in docs/editors.md."
  :type 'plist)

;;;; A plan's sandbox copy ("Preview plan" opens it) lies under
;;;; <data dir>/sandboxes/<plan id>/ and has its own acp.toml: it joins the
;;;; running acp-lsp instead of starting a second one there.

(defun acp-lsp--env (name)
  "Environment variable NAME, nil when unset or empty."
  (let ((value (getenv name)))
    (and value (not (string-empty-p value)) value)))

(defun acp-lsp-sandboxes-dir ()
  "Where the backend keeps plans' sandboxes: <data dir>/sandboxes/.
The data dir as acp-lsp finds it: \"--data-dir\" in `acp-lsp-command',
else $ACP_DATA_DIR, else $XDG_DATA_HOME/acp-lsp, else ~/.local/share/acp-lsp."
  (let ((dir (or (cadr (member "--data-dir" acp-lsp-command))
                 (seq-some (lambda (arg) (and (string-prefix-p "--data-dir=" arg)
                                              (substring arg (length "--data-dir="))))
                           acp-lsp-command)
                 (acp-lsp--env "ACP_DATA_DIR")
                 (expand-file-name "acp-lsp" (or (acp-lsp--env "XDG_DATA_HOME")
                                                 "~/.local/share")))))
    (file-name-as-directory (expand-file-name "sandboxes" dir))))

(defun acp-lsp-sandbox-p (file)
  "Non-nil when FILE lies in one of the backend's plan sandboxes."
  (and file
       (not (file-remote-p file))
       (let ((dir (acp-lsp-sandboxes-dir))
             (file (expand-file-name file)))
         (or (string-prefix-p dir file)
             (string-prefix-p (file-truename dir) (file-truename file))))))

(defun acp-lsp--same-config-p (sandbox-file root)
  "Non-nil when ROOT's acp.toml is what SANDBOX-FILE's copy of it holds."
  (let ((copy (locate-dominating-file sandbox-file "acp.toml"))
        (read (lambda (file)
                (when (file-readable-p file)
                  (with-temp-buffer
                    (set-buffer-multibyte nil)
                    (insert-file-contents-literally file)
                    (buffer-string))))))
    (and copy
         (equal (funcall read (expand-file-name "acp.toml" copy))
                (funcall read (expand-file-name "acp.toml" root))))))

(defun acp-lsp--owner (file candidates root-of)
  "The one of CANDIDATES that a sandbox FILE joins.
One whose root (ROOT-OF gives it) holds the acp.toml the sandbox's is a
copy of, else the first.  Any acp-lsp places the copy in the session of
the plan's resource (the backend says which); this keeps it with its own
project when several are open."
  (or (seq-find (lambda (candidate)
                  (acp-lsp--same-config-p file (funcall root-of candidate)))
                candidates)
      (car candidates)))

(defvar eglot--servers-by-project)
(declare-function project-root "project")
(declare-function eglot--project "eglot")
(declare-function eglot--server-info "eglot")

(defun acp-lsp--eglot-servers ()
  "The running eglot servers that are acp-lsp (by the name they answer)."
  (let (found)
    (when (boundp 'eglot--servers-by-project)
      (maphash (lambda (_project servers)
                 (dolist (server servers)
                   (when (equal (plist-get (eglot--server-info server) :name) "acp-lsp")
                     (push server found))))
               eglot--servers-by-project))
    found))

(defvar eglot-lsp-context)

(defun acp-lsp-project-find (dir)
  "The project of DIR: the nearest directory above it holding acp.toml.
For `project-find-functions', so that eglot and lsp-mode take that folder
as the server's root rather than an enclosing git repository's.  When eglot
asks for a plan's sandbox copy, the project of the running acp-lsp server
instead, so that eglot gives the copy to that server."
  (let ((server (and (bound-and-true-p eglot-lsp-context)
                     (acp-lsp-sandbox-p dir)
                     (acp-lsp--owner dir (acp-lsp--eglot-servers)
                                     (lambda (server)
                                       (project-root (eglot--project server)))))))
    (if server
        (eglot--project server)
      (when-let ((root (locate-dominating-file dir "acp.toml")))
        (cons 'transient (expand-file-name root))))))

(defun acp-lsp--contact (&optional _interactive)
  "The eglot contact: the command and, when set, the settings.
A sandbox copy with no acp-lsp server to join starts none."
  (when (and (acp-lsp-sandbox-p buffer-file-name) (not (acp-lsp--eglot-servers)))
    (user-error "acp-lsp: %s is a plan's sandbox copy; it joins the server of its \
project: open a file of the project first" buffer-file-name))
  (append acp-lsp-command
          (when acp-lsp-settings
            (list :initializationOptions (list :acp acp-lsp-settings)))))

;;;; eglot.  Eglot runs one server per buffer: in these modes acp-lsp
;;;; replaces any other language server eglot would start.
(with-eval-after-load 'eglot
  (acp-lsp--register-eglot))

;;;; lsp-mode.  An add-on client: it runs next to the mode's usual server.
;;;; A sandbox copy opens in the running acp-lsp workspace (the one last
;;;; active) as a "library" file, read-only; with none running, lsp-mode
;;;; does not offer acp-lsp for it.
(declare-function lsp-register-client "lsp-mode")
(declare-function make-lsp-client "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode")
(declare-function lsp-find-workspace "lsp-mode")
(with-eval-after-load 'lsp-mode
  (lsp-register-client
   (make-lsp-client
    :server-id 'acp-lsp
    :new-connection (lsp-stdio-connection (lambda () acp-lsp-command))
    ;; Only below an acp.toml: elsewhere nothing is validated, and lsp-mode's
    ;; flymake would wait for diagnostics that never come.  A sandbox copy:
    ;; only while an acp-lsp workspace runs (it joins it as a library file).
    :activation-fn (lambda (file-name mode)
                     (and file-name
                          (memq mode acp-lsp-major-modes)
                          (if (acp-lsp-sandbox-p file-name)
                              (lsp-find-workspace 'acp-lsp)
                            (locate-dominating-file file-name "acp.toml"))))
    :library-folders-fn (lambda (_workspace) (list (acp-lsp-sandboxes-dir)))
    :add-on? t
    :initialization-options (lambda () (when acp-lsp-settings (list :acp acp-lsp-settings))))))

(provide 'acp-lsp)
;;; acp-lsp.el ends here
