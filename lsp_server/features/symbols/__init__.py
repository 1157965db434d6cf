"""Workspace symbols: the backend's resources and validations, fuzzy-found.

The symbols of every resource in play are listed from the backend on the
first query after a change (an event, a resync, a saved ``acp.toml``), held,
and each query is then matched locally: typing in an editor's picker costs
no backend call. At most ``LIMIT`` symbols are answered, best first.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from operator import attrgetter
from typing import TYPE_CHECKING

from lsprotocol import types

from acp_client.client import AcpClient
from acp_client.errors import RemoteError, ServerFault
from acp_client.events import (
    Event,
    PlanApplied,
    PlanChanged,
    ResourceChanged,
    StreamReset,
    ValidationResultEvent,
)
from acp_client.models import Resource
from lsp_server.calls import SharedCalls
from lsp_server.features import Feature
from lsp_server.features.symbols.fuzzy import best
from lsp_server.features.symbols.index import DECLARATION_FILE, Symbol, resource_symbols
from lsp_server.roots import Placement

if TYPE_CHECKING:
    from lsp_server.server import AcpLanguageServer

log = logging.getLogger(__name__)

LIMIT = 250
"""The most symbols one query answers (editors show a screenful anyway)."""
_CHANGES = (ValidationResultEvent, PlanChanged, PlanApplied, ResourceChanged, StreamReset)


class Symbols(Feature):
    def __init__(self, session: AcpLanguageServer) -> None:
        super().__init__(session)
        self._symbols: list[Symbol] | None = None
        self._generation = 0
        self._listings: SharedCalls[int, list[Symbol]] = SharedCalls()

    async def query(self, query: str) -> list[types.WorkspaceSymbol]:
        symbols = self._symbols
        client = self.session.link.client
        if symbols is None:
            if client is None:
                return []
            generation = self._generation
            listed = await self.session.guarded(
                self._listings.run(generation, lambda: self._list(client, generation))
            )
            symbols = listed or []
        return [symbol.to_lsp() for symbol in best(symbols, query, attrgetter("name"), LIMIT)]

    async def _list(self, client: AcpClient, generation: int) -> list[Symbol]:
        symbols: list[Symbol] = []
        for resource in list(self.session.roots.resources.values()):
            symbols += await self._of(client, resource)
        if generation == self._generation:
            self._symbols = symbols
        return symbols

    @staticmethod
    async def _of(client: AcpClient, resource: Resource) -> list[Symbol]:
        try:
            listed = await client.validation_list(resource.id)
            results = await client.latest_results(resource.id)
        except (RemoteError, ServerFault) as exc:
            log.warning("cannot list the validations of %s: %s", resource.name, exc)
            return resource_symbols(resource, (), {})
        latest = {result.validation: result for result in results}
        return resource_symbols(resource, listed.validations, latest)

    # --- what makes the held symbols stale ----------------------------------

    async def resync(self, client: AcpClient, resources: Mapping[str, Resource]) -> None:
        self._forget()

    async def on_event(self, client: AcpClient, event: Event) -> None:
        if isinstance(event, _CHANGES):
            self._forget()

    def backend_lost(self) -> None:
        self._forget()

    async def document_saved(self, uri: str, placement: Placement | None) -> None:
        if placement is not None and placement.logical_path == DECLARATION_FILE:
            self._forget()

    def _forget(self) -> None:
        self._generation += 1
        self._symbols = None
