"""Fixtures of the language server's end-to-end tests (see ``lsp_harness``)."""

from tests.support.lsp_harness import backend, data_dir, lsp, server_process

__all__ = ["backend", "data_dir", "lsp", "server_process"]
