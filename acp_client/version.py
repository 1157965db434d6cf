"""The version of acp-lsp, the one distribution that ships ``acp_client``,
``lsp_server`` and ``acp_backend``: written here only (``pyproject.toml``
reads it from this file; the language server and the backend report it)."""

__version__ = "0.1.0"
