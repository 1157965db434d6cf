"""The ACP contract (pydantic models) and a client for local and server mode.

This package knows nothing of LSP and nothing of any backend's internals.
"""

from acp_client.client import AcpClient
from acp_client.connect import connect

__all__ = ["AcpClient", "connect"]
