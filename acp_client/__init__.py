"""The ACP contract (pydantic models) and a client for local and server mode.

This package knows nothing of LSP and nothing of any backend's internals.
``AcpClient`` loads on first use, so a submodule that needs no pydantic
(``paths``, ``errors``, ``transport``) stays cheap to import; ``connect``
lives in ``acp_client.connect`` (a name the package cannot also lazily hold).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_client.client import AcpClient

__all__ = ["AcpClient"]


def __getattr__(name: str) -> Any:
    if name != "AcpClient":
        raise AttributeError(f"module 'acp_client' has no attribute {name!r}")
    return importlib.import_module("acp_client.client").AcpClient
