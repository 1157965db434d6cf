"""acp-lsp: a language server that presents an ACP backend to any editor."""

from acp_client.version import __version__ as __version__
