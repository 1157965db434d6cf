"""Workspace symbols: the backend's resources, validations and active plans, fuzzy-found.

The symbols of every resource in play are listed from the backend on the
first query after a change (an event, a resync, a saved ``acp.toml``), held,
and each query is then matched locally: typing in an editor's picker costs
no backend call. At most ``LIMIT`` symbols are answered, best first. A
plan's first change needs a ``plan.preview``: a client that resolves
symbols (``workspaceSymbol/resolve``) gets it when it opens one, others at
listing time.
"""

from __future__ import annotations

import logging
import posixpath

import attrs
from lsprotocol import types

from acp_client.client import AcpClient
from acp_client.errors import RemoteError, ServerFault
from acp_client.events import STALE_AFTER, Event
from acp_client.models import OPEN_PLAN_STATES, Resource
from acp_client.paths import CONFIG_FILE, path_to_uri
from lsp_server.calls import BackendCalls, SharedCalls
from lsp_server.editor import Editor
from lsp_server.features import Feature
from lsp_server.features.symbols.fuzzy import NameIndex
from lsp_server.features.symbols.index import (
    Symbol,
    first_change,
    line_location,
    plan_symbol,
    resource_symbols,
)
from lsp_server.snapshot import Snapshot

log = logging.getLogger(__name__)

LIMIT = 250
"""The most symbols one query answers (editors show a screenful anyway)."""


class Symbols(Feature):
    def __init__(self, editor: Editor, calls: BackendCalls) -> None:
        super().__init__(editor, calls)
        self._symbols: tuple[list[Symbol], NameIndex] | None = None
        self._generation = 0
        self._listings: SharedCalls[int, tuple[list[Symbol], NameIndex]] = SharedCalls()

    async def query(self, snapshot: Snapshot, query: str) -> list[types.WorkspaceSymbol]:
        listed = self._symbols
        client = snapshot.backend
        if listed is None:
            if client is None:
                return []
            generation = self._generation
            listed = await self.calls.guarded(
                self._listings.run(generation, lambda: self._list(snapshot, client, generation))
            )
            if listed is None:
                return []
        symbols, names = listed
        return [symbols[index].to_lsp() for index in names.best(query, LIMIT)]

    async def _list(
        self, snapshot: Snapshot, client: AcpClient, generation: int
    ) -> tuple[list[Symbol], NameIndex]:
        symbols: list[Symbol] = []
        lazy = "location.range" in snapshot.support.symbol_resolve
        for resource in snapshot.resources:
            symbols += await self._of(client, resource, lazy)
        listed = symbols, NameIndex([symbol.name for symbol in symbols])
        if generation == self._generation:
            self._symbols = listed
        return listed

    async def _of(self, client: AcpClient, resource: Resource, lazy: bool) -> list[Symbol]:
        try:
            listed = await client.validation_list(resource.id)
            results = await client.latest_results(resource.id)
        except (RemoteError, ServerFault) as exc:
            log.warning("cannot list the validations of %s: %s", resource.name, exc)
            return resource_symbols(resource, (), {})
        latest = {result.validation: result for result in results}
        return resource_symbols(resource, listed.validations, latest) + await self._plans(
            client, resource, lazy
        )

    async def _plans(self, client: AcpClient, resource: Resource, lazy: bool) -> list[Symbol]:
        try:
            listed = await self.calls.if_offered(client.plan_list(resource.id))
        except (RemoteError, ServerFault) as exc:
            log.warning("cannot list the plans of %s: %s", resource.name, exc)
            return []
        plans = [plan for plan in listed or () if plan.state in OPEN_PLAN_STATES]
        symbols: list[Symbol] = []
        for plan in plans:
            line = None if lazy else await self._first_line(client, plan.id)
            symbols.append(plan_symbol(resource, plan, line))
        return symbols

    async def _first_line(self, client: AcpClient, plan_id: str) -> int:
        try:
            preview = await self.calls.if_offered(client.plan_preview(plan_id))
        except (RemoteError, ServerFault):  # gone, or not previewable yet
            return 0
        found = first_change(preview) if preview is not None else None
        return 0 if found is None else found[1]

    async def resolve(
        self, snapshot: Snapshot, symbol: types.WorkspaceSymbol
    ) -> types.WorkspaceSymbol:
        """The range of a plan's first change (other symbols come complete)."""
        data = symbol.data if isinstance(symbol.data, dict) else {}
        client = snapshot.backend
        plan_id, root = data.get("plan_id"), data.get("root")
        if client is None or not isinstance(plan_id, str) or not isinstance(root, str):
            return symbol
        preview = await self.calls.guarded(client.plan_preview(plan_id))
        found = first_change(preview) if preview is not None else None
        if found is None:
            if isinstance(symbol.location, types.LocationUriOnly):
                return attrs.evolve(symbol, location=line_location(symbol.location.uri, 0))
            return symbol
        path, line = found
        return attrs.evolve(
            symbol, location=line_location(path_to_uri(posixpath.join(root, path)), line)
        )

    # --- what makes the held symbols stale ----------------------------------

    def resynced(self, snapshot: Snapshot) -> None:
        self._forget()

    def event(self, event: Event, snapshot: Snapshot) -> None:
        if isinstance(event, STALE_AFTER):
            self._forget()

    def backend_lost(self) -> None:
        self._forget()

    def document_saved(self, snapshot: Snapshot) -> None:
        if snapshot.placement is not None and snapshot.placement.logical_path == CONFIG_FILE:
            self._forget()

    def _forget(self) -> None:
        self._generation += 1
        self._symbols = None
