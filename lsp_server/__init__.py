"""acp-lsp: a language server that presents an ACP backend to any editor."""

__version__ = "0.1.0"
