"""The ACP contract (pydantic models) and a client for local and server mode.

This package knows nothing of LSP and nothing of any backend's internals.

``AcpClient`` loads on first use: importing a light module (``acp_client.errors``,
``paths``, ``signals``) must not pay for pydantic and httpx (ADR 0016).
``connect`` is ``acp_client.connect.connect``: re-exported lazily under its
module's own name it would be the module or the function depending on import
order.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_client.client import AcpClient

__all__ = ["AcpClient"]


def __getattr__(name: str) -> object:
    if name != "AcpClient":
        raise AttributeError(f"module 'acp_client' has no attribute {name!r}")
    return importlib.import_module("acp_client.client").AcpClient
