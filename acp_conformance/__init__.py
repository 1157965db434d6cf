"""acp-conformance: a pytest plugin that checks any ACP backend against the
contract, and any ACP language server through pytest-lsp.

``pytest --acp-conformance=backend --acp URL --acp-token-file F`` or
``pytest --acp-conformance=server --server-command "acp-lsp ..."``; see
``docs/conformance.md``. It speaks to backends only as a client does
(``acp_client``); it never imports a backend's or a server's internals.
"""
