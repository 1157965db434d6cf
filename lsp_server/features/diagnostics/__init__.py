"""Diagnostics: validation results in the editor, live, push or pull.

One store (``store``) fed by listings and ``validation.*`` events, one
presenter (``presenter``) that turns it into LSP diagnostics for the
negotiated encoding, coalesced sending (``publisher``), runs started on save
or change (``runs``) and their progress (``progress``). Everything this
feature asks the backend is read-only, apart from starting and cancelling
validation runs, which change no resource and no plan.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from acp_client.client import AcpClient
from acp_client.errors import RemoteError, ServerFault
from acp_client.events import (
    Event,
    PlanChanged,
    ResourceChanged,
    ValidationCompleted,
    ValidationResultEvent,
    ValidationStarted,
)
from acp_client.models import Plan, Resource
from lsp_server.features import Feature
from lsp_server.features.diagnostics.presenter import OpenDocument, Presenter
from lsp_server.features.diagnostics.progress import RunProgress
from lsp_server.features.diagnostics.publisher import CoalescingPublisher
from lsp_server.features.diagnostics.runs import RunScheduler
from lsp_server.features.diagnostics.store import DiagnosticsStore
from lsp_server.roots import DECLARATION_FILE, FileKey, Placement, sandbox_scope
from lsp_server.settings import RunOn

if TYPE_CHECKING:
    from lsp_server.server import AcpLanguageServer

log = logging.getLogger(__name__)


OUTPUT_BACKLOG = 256 * 1024
"""Bytes sent but not yet read by the editor beyond which publishing waits:
an answer queued behind them waits for the editor to read them all."""


class Diagnostics(Feature):
    def __init__(self, session: AcpLanguageServer) -> None:
        super().__init__(session)
        self.store = DiagnosticsStore()
        self.presenter = Presenter(
            self.store, session.roots, types.PositionEncodingKind.Utf16, self._changed
        )
        self._publisher: CoalescingPublisher[FileKey] = CoalescingPublisher(
            self._publish,
            backed_up=lambda: session.output_backlog() > OUTPUT_BACKLOG,
            in_view=self.presenter.is_open,  # refreshed even in a hold
        )
        self._refresher: CoalescingPublisher[str] = CoalescingPublisher(self._refresh)
        self._progress = RunProgress(session.work_done_progress, self._cancel_run)
        self._runs = RunScheduler(self._start_run, session.spawn)
        self._filled: set[str] = set()
        self._run_when_placed: set[str] = set()  # saved or edited before being placed
        self._sandboxes: dict[str, str | None] = {}  # plan id -> its sandbox's scope, if any
        self._holding_for: set[str] = set()  # runs of several validations in progress

    @property
    def pull(self) -> bool:
        return self.session.support.pull_diagnostics

    def start(self) -> None:
        self.presenter.encoding = self.session.encoding
        self.presenter.related_information = self.session.support.related_information
        self.presenter.code_description = self.session.support.code_description
        self.session.spawn(self._progress.run())

    def backend_lost(self) -> None:
        self._progress.interrupt()
        self._end_hold()

    def close(self) -> None:
        self._publisher.close()
        self._refresher.close()
        self._runs.close()

    # --- the backend -------------------------------------------------------

    async def resync(self, client: AcpClient, resources: Mapping[str, Resource]) -> None:
        self._end_hold()  # runs whose end this session may have missed
        for resource_id in self.store.resource_ids() - resources.keys():
            self.presenter.changed(self.store.forget_resource(resource_id))  # out of play
        self._filled.clear()
        for resource in resources.values():
            await self.fill(client, resource)
        await self._run_placed()

    async def fill(self, client: AcpClient, resource: Resource) -> None:
        """Replace a resource's diagnostics with the backend's latest results
        and the current state of its ``acp.toml``."""
        await self._fill_results(client, resource)
        await self._check_config(client, resource)
        await self._fill_sandboxes(client, resource)

    async def _fill_results(
        self, client: AcpClient, resource: Resource, plan: Plan | None = None
    ) -> None:
        """The latest results of the resource, or of one of its plans."""
        since = self.store.now()
        plan_id = plan.id if plan is not None else None
        try:
            results = await client.latest_results(resource.id, plan=plan_id)
        except (RemoteError, ServerFault) as exc:
            # Refused, or a stored result this client cannot read: the other
            # resources (and live events for this one) must still show.
            log.warning("cannot list the results of %s: %s", resource.name, exc)
            return
        scope = resource.id if plan_id is None else self._sandboxes.get(plan_id)
        if scope is None:
            return
        if plan_id is None:
            self._filled.add(resource.id)
        self.presenter.changed(self.store.replace(scope, results, since))

    async def _fill_sandboxes(self, client: AcpClient, resource: Resource) -> None:
        """The results of each plan whose sandbox exists, shown on its files."""
        try:
            plans = await self.session.if_offered(client.plan_list(resource.id))
        except (RemoteError, ServerFault) as exc:
            log.info("cannot list the plans of %s: %s", resource.name, exc)
            return
        for plan in plans or ():
            self.presenter.changed(self._remember(plan))
            if plan.sandbox_root is not None:
                await self._fill_results(client, resource, plan)

    def _remember(self, plan: Plan) -> set[FileKey]:
        """Where the plan's results show; when its sandbox goes, they go."""
        scope = None
        if plan.sandbox_root is not None:
            scope = sandbox_scope(plan.resource_id, plan.sandbox_root)
        before = self._sandboxes.get(plan.id)
        self._sandboxes[plan.id] = scope
        if before is not None and before != scope:
            return self.store.replace(before, ())
        return set()

    async def _plan_scope(self, client: AcpClient, plan_id: str) -> str | None:
        if plan_id not in self._sandboxes:
            try:
                plan = await self.session.if_offered(client.plan_get(plan_id))
            except (RemoteError, ServerFault) as exc:
                log.info("cannot place the results of plan %s: %s", plan_id, exc)
                return None
            if plan is None:
                return None
            self._remember(plan)
        return self._sandboxes.get(plan_id)

    async def _check_config(self, client: AcpClient, resource: Resource) -> None:
        """Show the error of a broken ``acp.toml``, or clear it once fixed:
        the backend keeps the last valid declarations in force and says so
        only when asked (``validation.list``)."""
        try:
            listed = await client.validation_list(resource.id)
        except (RemoteError, ServerFault) as exc:
            log.warning("cannot list the validations of %s: %s", resource.name, exc)
            return
        self.presenter.changed(self.store.set_config_error(resource.id, listed.config_error))

    async def on_event(self, client: AcpClient, event: Event) -> None:
        if isinstance(event, ValidationResultEvent):
            plan_id = event.result.plan_id
            if event.covered is not None and event.base_result_id is not None:
                await self._apply_partial(client, event, event.covered, event.base_result_id)
            elif plan_id is None:
                self.presenter.apply(event.result)
            else:
                scope = await self._plan_scope(client, plan_id)
                if scope is not None:
                    self.presenter.apply(event.result, scope)
            self._observe_run(event, event.result.resource_id)
        elif isinstance(event, PlanChanged):
            self.presenter.changed(self._remember(event.plan))
        elif isinstance(event, ValidationStarted | ValidationCompleted):
            self._observe_run(event, event.resource_id)
            self._hold_during(event)
        elif isinstance(event, ResourceChanged) and event.change == "unregistered":
            self.presenter.changed(self.store.forget_resource(event.resource.id))

    async def _apply_partial(
        self,
        client: AcpClient,
        event: ValidationResultEvent,
        covered: tuple[str, ...],
        base_id: str,
    ) -> None:
        """A save's result on the files it covered (ADR 0017); when it does
        not continue the result shown, the listing has the whole one."""
        if self.presenter.apply_partial(event.result, covered, base_id):
            return
        resource = self.session.roots.resources.get(event.result.resource_id)
        if resource is not None:
            await self._fill_results(client, resource)

    def _observe_run(
        self,
        event: ValidationStarted | ValidationResultEvent | ValidationCompleted,
        resource_id: str,
    ) -> None:
        if resource_id in self.session.roots.resources and self._wants_progress():
            self._progress.observe(event)

    def _hold_during(self, event: ValidationStarted | ValidationCompleted) -> None:
        """Publish a run of several validations about once per file: their
        results are held back until it ends, or for a bounded time."""
        if isinstance(event, ValidationStarted):
            if len(event.validations) > 1 and event.resource_id in self.session.roots.resources:
                self._holding_for.add(event.run_id)
                self._publisher.hold()
        elif event.run_id in self._holding_for:
            self._holding_for.discard(event.run_id)
            if not self._holding_for:
                self._publisher.release()

    def _end_hold(self) -> None:
        self._holding_for.clear()
        self._publisher.release()

    def _wants_progress(self) -> bool:
        return self.session.settings.progress and self.session.support.work_done_progress

    # --- documents ---------------------------------------------------------

    def document_placed(self, uri: str, placement: Placement) -> None:
        self.presenter.opened(
            placement.key, self._document(uri), clear_stale=self.session.settings.clear_on_edit
        )

    async def document_opened(self, uri: str, placement: Placement) -> None:
        client = self.session.link.client
        if client is not None and placement.resource.id not in self._filled:
            await self.session.guarded(self.fill(client, placement.resource))
        await self._run_placed()

    def document_edited(self, uri: str, placement: Placement | None) -> None:
        settings = self.session.settings
        if placement is None:
            if settings.run_on is RunOn.CHANGE:
                self._run_when_placed.add(uri)
            return
        self.presenter.edited(placement.key, self._document(uri), clear=settings.clear_on_edit)
        if settings.run_on is RunOn.CHANGE and not placement.sandbox:
            delay = settings.debounce_ms / 1000
            self._runs.later(placement.resource.id, placement.logical_path, delay)

    async def document_saved(self, uri: str, placement: Placement | None) -> None:
        run = self.session.settings.run_on is RunOn.SAVE
        if placement is None:
            if run:
                self._run_when_placed.add(uri)  # e.g. saved before the backend connected
            return
        work: list[Coroutine[Any, Any, object]] = []
        client = self.session.link.client
        if placement.logical_path == DECLARATION_FILE and client is not None:
            work.append(self.session.guarded(self._check_config(client, placement.resource)))
        if run and not placement.sandbox:  # a sandbox copy is its plan's to validate
            work.append(self._runs.now(placement.resource.id, frozenset({placement.logical_path})))
        await asyncio.gather(*work)  # the check does not wait for the run

    def document_closed(self, uri: str, placement: Placement | None) -> None:
        self._run_when_placed.discard(uri)
        if placement is not None:
            self.presenter.closed(placement.key)

    def document_unplaced(self, uri: str, placement: Placement) -> None:
        self.presenter.closed(placement.key)

    async def _run_placed(self) -> None:
        """The runs that saves and edits asked for before their documents
        were placed: one per resource, covering all of its paths."""
        due: dict[str, set[str]] = {}
        for uri in list(self._run_when_placed):
            placement = self.session.placed(uri)
            if placement is None:
                continue
            self._run_when_placed.discard(uri)
            due.setdefault(placement.resource.id, set()).add(placement.logical_path)
        for resource_id, paths in due.items():
            await self._runs.now(resource_id, frozenset(paths))

    def _document(self, uri: str) -> OpenDocument:
        document = self.session.workspace.get_text_document(uri)
        return OpenDocument(uri, document.version, document.source)

    # --- runs --------------------------------------------------------------

    async def _start_run(self, resource_id: str, paths: frozenset[str]) -> None:
        client = self.session.link.client
        if client is not None:
            await self.session.guarded(
                client.validation_run(resource_id, paths=tuple(sorted(paths)))
            )

    async def _cancel_run(self, run_id: str) -> None:
        client = self.session.link.client
        if client is not None:
            await self.session.guarded(client.validation_cancel(run_id))

    async def progress_cancelled(self, token: str) -> None:
        await self._progress.cancel(token)

    # --- sending -----------------------------------------------------------

    def _changed(self, keys: Collection[FileKey]) -> None:
        if self.pull:
            self._refresher.changed("workspace")
        else:
            self._publisher.changed_all(keys)

    def _publish(self, key: FileKey) -> None:
        for params in self.presenter.publish_params(key):  # JSON already
            self.session.notify_json(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)

    def _refresh(self, _: str) -> None:
        self.session.workspace_diagnostic_refresh(None)

    async def document_report(
        self, uri: str, previous: str | None
    ) -> types.DocumentDiagnosticReport:
        placement = await self.session.placement(uri)
        if placement is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        return self.presenter.document_report(placement.key, previous)

    def workspace_report(
        self, previous: Iterable[types.PreviousResultId]
    ) -> types.WorkspaceDiagnosticReport:
        known = {item.uri: item.value for item in previous}
        return types.WorkspaceDiagnosticReport(items=self.presenter.workspace_reports(known))
