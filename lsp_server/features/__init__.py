"""The server's features, one room each.

The session (``lsp_server.server``) owns what they share: the backend link,
settings, client support, the placement of documents in resources and the
background tasks. A feature holds its own state and logic; the session calls
the hooks below at the moments they name, and ``lsp_server.handlers`` routes
each LSP method to one feature method.

The features load after the ``initialize`` answer (``lsp_server.preload``,
ADR 0016): this package imports nothing heavy itself, and the session builds
them through ``lsp_server.features.loaded``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_client.client import AcpClient
    from acp_client.events import Event
    from acp_client.models import Resource
    from lsp_server.roots import Placement
    from lsp_server.server import AcpLanguageServer


class Feature:
    """Base of every feature: hooks with no effect until overridden."""

    def __init__(self, session: AcpLanguageServer) -> None:
        self.session = session

    def start(self) -> None:
        """At ``initialized``, settings read: start background work (``session.spawn``)."""

    async def resync(self, client: AcpClient, resources: Mapping[str, Resource]) -> None:
        """The resources in play (by id) after a (re)connection, a registry or
        folder change, or a lost event position: rebuild from the backend."""

    async def on_event(self, client: AcpClient, event: Event) -> None:
        """A backend event, in order."""

    def backend_lost(self) -> None:
        """The backend went away; what it was doing will not report back."""

    def document_placed(self, uri: str, placement: Placement) -> None:
        """An open document was placed (again) in a resource: at its opening
        and at every resync."""

    async def document_opened(self, uri: str, placement: Placement) -> None:
        """A document the editor just opened was placed (after ``document_placed``)."""

    def document_unplaced(self, uri: str, placement: Placement) -> None:
        """An open document no longer belongs where it was placed (the registry changed)."""

    def document_edited(self, uri: str, placement: Placement | None) -> None:
        """An open document's text changed (placement None: not placed yet)."""

    async def document_saved(self, uri: str, placement: Placement | None) -> None:
        """A document was saved (placement None: not placed yet)."""

    def document_closed(self, uri: str, placement: Placement | None) -> None:
        """A document was closed."""

    def close(self) -> None:
        """At shutdown: drop timers (tasks are the session's to cancel)."""
