"""``acp.initialize``: version negotiation and what this backend offers."""

from __future__ import annotations

from acp_backend.routes import ROUTES
from acp_backend.services import Services
from acp_client.errors import VersionMismatch
from acp_client.events import EVENT_TYPES
from acp_client.operations import (
    PROTOCOL_VERSION,
    InitializeParams,
    InitializeResult,
    version_compatible,
)
from acp_client.version import __version__

SERVER_NAME = "acp-backend"


async def initialize(services: Services, params: InitializeParams) -> InitializeResult:
    if not version_compatible(PROTOCOL_VERSION, params.protocol_version):
        raise VersionMismatch(
            f"client speaks ACP {params.protocol_version}, this backend {PROTOCOL_VERSION}",
            remedy="upgrade the older side",
            data={"supported": PROTOCOL_VERSION},
        )
    return InitializeResult(
        protocol_version=PROTOCOL_VERSION,
        server_name=SERVER_NAME,
        server_version=__version__,
        operations=tuple(sorted(ROUTES)),
        events=tuple(sorted(EVENT_TYPES)),
        last_event_id=services.events.last_id() or None,
    )
