"""The session's mirror of what the backend has told: results (with each
resource's ``acp.toml`` error), declarations, plans and where each plan's
results show (its sandbox).

Owned by the session and changed only through it: by an event
(``take_result``, ``take_plan``), a listing (``take_listing``) or the end of
a fetch an event needed. Each change returns, or hands ``on_change``, the
files whose diagnostics it changed. A fetch never holds up the events
behind it: it runs as a task (``later``), and what it brings is one more
change.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from acp_client.client import AcpClient
from acp_client.errors import RemoteError, ServerFault
from acp_client.events import ValidationResultEvent
from acp_client.models import (
    APPLIABLE_PLAN_STATES,
    Plan,
    Resource,
    ValidationResult,
    ValidationSpec,
)
from acp_client.operations import ValidationListResult, ValidationSchemaResult
from lsp_server.calls import BackendCalls
from lsp_server.listing import Listing, list_resource
from lsp_server.results import ResultStore
from lsp_server.roots import FileKey, Roots, sandbox_scope

log = logging.getLogger(__name__)

OnChange = Callable[[Collection[FileKey]], None]
Later = Callable[[Coroutine[Any, Any, None]], object]

NO_SPECS: Mapping[str, ValidationSpec] = MappingProxyType({})


class Mirror:
    def __init__(
        self, calls: BackendCalls, roots: Roots, on_change: OnChange, later: Later
    ) -> None:
        self._calls = calls
        self._roots = roots
        self._on_change = on_change
        self._later = later
        self.results = ResultStore()
        self._specs: dict[str, Mapping[str, ValidationSpec]] = {}  # replaced, never edited
        self._schemas: dict[str, ValidationSchemaResult] = {}  # what acp.toml may declare
        self._plans: dict[str, Plan] = {}
        self._plan_ticks: dict[str, int] = {}  # the event count when a plan was last taken
        self._sandboxes: dict[str, str | None] = {}  # plan id -> its sandbox's scope
        self._waiting: dict[str, list[ValidationResult]] = {}  # plan results, sandbox unknown
        # The text each appliable plan's changes expect (base sha256 by path;
        # None: a file it creates), from its preview: whether it still fits.
        self._bases: dict[str, Mapping[str, str | None]] = {}
        self.filled: set[str] = set()  # resources listed (or being listed) once
        self.tick = 0  # events taken

    # --- reads -------------------------------------------------------------

    def specs(self, resource_id: str) -> Mapping[str, ValidationSpec]:
        return self._specs.get(resource_id, NO_SPECS)

    def schema(self, resource_id: str) -> ValidationSchemaResult | None:
        return self._schemas.get(resource_id)

    def plans(self, resource_id: str) -> Sequence[Plan]:
        return tuple(plan for plan in self._plans.values() if plan.resource_id == resource_id)

    def bases(self, plans: Sequence[Plan]) -> Mapping[str, Mapping[str, str | None]]:
        return {plan.id: self._bases[plan.id] for plan in plans if plan.id in self._bases}

    # --- events ------------------------------------------------------------

    def take_result(self, event: ValidationResultEvent) -> set[FileKey]:
        result = event.result
        if result.resource_id not in self._roots.resources:
            return set()  # a resource no folder or document of this session belongs to
        if event.covered is not None and event.base_result_id is not None:
            # A save's result on the files it covered (ADR 0017); when it does
            # not continue the result shown, the listing has the whole one.
            changed = self.results.apply_partial(result, event.covered, event.base_result_id)
            if changed is None:
                self._later(self._relist_results(self._roots.resources[result.resource_id]))
                return set()
            return changed
        plan_id = result.plan_id
        if plan_id is None:
            return self.results.apply(result)
        if plan_id in self._sandboxes:
            scope = self._sandboxes[plan_id]
            return set() if scope is None else self.results.apply(result, scope)
        waiting = self._waiting.setdefault(plan_id, [])
        waiting.append(result)
        if len(waiting) == 1:  # the first heard of this plan: where does it show?
            self._later(self._learn_plan(plan_id))
        return set()

    def take_plan(self, plan: Plan, *, from_event: bool = False) -> set[FileKey]:
        if from_event:
            self._plan_ticks[plan.id] = self.tick
        known = self._plans.get(plan.id)
        if known is not None and known.updated_at > plan.updated_at:
            return set()  # an older view of it
        self._plans[plan.id] = plan
        if plan.state not in APPLIABLE_PLAN_STATES:
            self._bases.pop(plan.id, None)
        elif plan.id not in self._bases:
            self._later(self._learn_bases(plan.id))
        scope = None
        if plan.sandbox_root is not None:
            scope = sandbox_scope(plan.resource_id, plan.sandbox_root)
        before = self._sandboxes.get(plan.id)
        self._sandboxes[plan.id] = scope
        changed = set()
        if before is not None and before != scope:  # its sandbox went: so do its results
            changed = self.results.replace(before, ())
        for result in self._waiting.pop(plan.id, ()):
            if scope is not None:
                changed |= self.results.apply(result, scope)
        return changed

    def forget_resource(self, resource_id: str) -> set[FileKey]:
        self.filled.discard(resource_id)
        self._specs.pop(resource_id, None)
        self._schemas.pop(resource_id, None)
        for plan in [p for p in self._plans.values() if p.resource_id == resource_id]:
            del self._plans[plan.id]
            self._bases.pop(plan.id, None)
        return self.results.forget_resource(resource_id)

    # --- listings ----------------------------------------------------------

    async def list(self, client: AcpClient, resource: Resource) -> None:
        """List a resource and take the listing in."""
        self.filled.add(resource.id)
        listing = await list_resource(self._calls, client, resource, self.results.now(), self.tick)
        self._on_change(self.take_listing(listing))

    def take_listing(self, listing: Listing) -> set[FileKey]:
        """A resource's listing (``lsp_server.listing``), newer events kept."""
        resource_id = listing.resource.id
        changed: set[FileKey] = set()
        if listing.results is not None:
            changed |= self.results.replace(resource_id, listing.results, listing.since)
        if listing.declarations is not None:
            changed |= self._take_declarations(resource_id, listing.declarations)
        if listing.schema is not None:
            self._schemas[resource_id] = listing.schema
        if listing.plans is not None:
            listed = {plan.id for plan in listing.plans}
            for plan in self.plans(resource_id):
                if plan.id not in listed and self._plan_ticks.get(plan.id, 0) <= listing.tick:
                    del self._plans[plan.id]
            for plan in listing.plans:
                changed |= self.take_plan(plan)
            for plan_id, results in listing.plan_results.items():
                scope = self._sandboxes.get(plan_id)
                if scope is not None:
                    changed |= self.results.replace(scope, results, listing.since)
        return changed

    def _take_declarations(self, resource_id: str, declared: ValidationListResult) -> set[FileKey]:
        self._specs[resource_id] = MappingProxyType({s.name: s for s in declared.validations})
        return self.results.set_config_error(resource_id, declared.config_error)

    # --- what an event or a save needs fetched -----------------------------

    async def _learn_plan(self, plan_id: str) -> None:
        client = self._calls.client
        plan = None
        if client is not None:
            try:
                plan = await self._calls.if_offered(client.plan_get(plan_id))
            except (RemoteError, ServerFault) as exc:
                log.info("cannot place the results of plan %s: %s", plan_id, exc)
        if plan is None:
            self._waiting.pop(plan_id, None)
        else:
            self._on_change(self.take_plan(plan))

    async def _learn_bases(self, plan_id: str) -> None:
        """What a plan's changes expect, so its actions can say it no longer fits."""
        client = self._calls.client
        if client is None:
            return
        try:
            preview = await self._calls.if_offered(client.plan_preview(plan_id))
        except (RemoteError, ServerFault) as exc:  # gone meanwhile, or refused
            log.info("cannot preview plan %s: %s", plan_id, exc)
            return
        if preview is not None and plan_id in self._plans:
            self._bases[plan_id] = {
                change.old_path or change.path: change.base_sha256 for change in preview.changes
            }

    async def _relist_results(self, resource: Resource) -> None:
        client = self._calls.client
        if client is not None:
            since = self.results.now()
            results = await client.latest_results(resource.id)
            self._on_change(self.results.replace(resource.id, results, since))

    async def declarations(self, client: AcpClient, resource: Resource) -> None:
        """``acp.toml`` saved: its declarations and whether it is broken (the
        backend keeps the last valid ones in force and says so when asked),
        and what it may declare (a preset's tool may have been installed)."""
        try:
            declared = await client.validation_list(resource.id)
            schema = await self._calls.if_offered(client.validation_schema(resource.id))
        except (RemoteError, ServerFault) as exc:
            log.warning("cannot list the validations of %s: %s", resource.name, exc)
            return
        if schema is not None:
            self._schemas[resource.id] = schema
        self._on_change(self._take_declarations(resource.id, declared))
