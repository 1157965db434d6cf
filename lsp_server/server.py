"""``AcpLanguageServer``: the one object that owns a session's state and tasks.

Handlers (``lsp_server.handlers``) are thin and call the methods here; the
logic lives in plain modules (store, mapping, positions, roots, publisher).
Everything the diagnostics path asks the backend is read-only; the only
other call is ``validation.run`` (and ``validation.cancel``), which starts or
stops a run but changes no resource and no plan.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Generator, Iterable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from acp_client.client import AcpClient
from acp_client.errors import AcpError, RemoteError, ServerFault, TransportError
from acp_client.events import (
    Event,
    ResourceChanged,
    StreamReset,
    ValidationCompleted,
    ValidationResultEvent,
    ValidationStarted,
)
from acp_client.models import Resource, ValidationResult
from acp_client.paths import is_within
from lsp_server import __version__
from lsp_server.backend import BackendLink, Backoff, Connector
from lsp_server.diagnostics import OpenDocument, Presenter
from lsp_server.mapping import DECLARATION_FILE
from lsp_server.progress import RunProgress
from lsp_server.publisher import CoalescingPublisher
from lsp_server.roots import Placement, Roots, file_path
from lsp_server.runs import RunScheduler
from lsp_server.settings import SECTION, RunOn, Settings, parse_settings, unwrap_section
from lsp_server.store import DiagnosticsStore, FileKey

log = logging.getLogger(__name__)

T = TypeVar("T")

REGISTER_HINT = "acp-backend resource add {path}"


def pulls(capabilities: types.ClientCapabilities) -> bool:
    """Pull only when the client can pull *and* can be told to pull again:
    a pull client without ``workspace/diagnostic/refresh`` would show new
    results only when it next happens to ask, so it is better served by push."""
    text = capabilities.text_document
    workspace = capabilities.workspace
    return bool(
        text is not None
        and text.diagnostic is not None
        and workspace is not None
        and workspace.diagnostics is not None
        and workspace.diagnostics.refresh_support
    )


class AcpProtocol(LanguageServerProtocol):
    _server: AcpLanguageServer

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        if not self._server.pull:
            # Advertising pull to a push client would make it ask, and show both.
            result.capabilities.diagnostic_provider = None
        return result


class AcpLanguageServer(LanguageServer):
    def __init__(self, connector: Connector) -> None:
        super().__init__("acp-lsp", __version__, protocol_cls=AcpProtocol)
        self.link = BackendLink(connector)
        self.settings = Settings()
        self.pull = False
        self.store = DiagnosticsStore()
        self.roots = Roots()
        self.presenter = Presenter(
            self.store, self.roots, types.PositionEncodingKind.Utf16, self._changed
        )
        self._publisher: CoalescingPublisher[FileKey] = CoalescingPublisher(self._publish)
        self._refresher: CoalescingPublisher[str] = CoalescingPublisher(self._refresh)
        self._run_progress = RunProgress(self.work_done_progress, self._cancel_run)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._runs = RunScheduler(self._start_run, self._spawn)
        self._placed: dict[str, Placement] = {}
        self._run_when_placed: set[str] = set()  # saved or edited before being placed
        self._sync_lock = asyncio.Lock()
        self._filled: set[str] = set()
        self._in_play: set[str] = set()
        self._announced: set[str] = set()
        self._last_event_id: int | None = None
        self._outage_said = False
        self._init_options: object = None
        self._settings_message: str | None = None
        self._stopping: asyncio.Task[None] | None = None

    # --- lifecycle ---------------------------------------------------------

    def setup(self, params: types.InitializeParams) -> None:
        """At ``initialize``: decide push/pull and encoding, read initial settings."""
        self.pull = pulls(params.capabilities)
        self.presenter.encoding = self.workspace.position_encoding or "utf-16"
        self._init_options = unwrap_section(params.initialization_options)
        self._apply_settings(self._init_options)

    async def start(self) -> None:
        """At ``initialized``: settings from the editor, then the backend tasks."""
        await self.reload_settings(None)
        if self._stopping is not None:
            return  # shut down while the editor was answering
        self._spawn(self._follow_backend())
        self._spawn(self._run_progress.run())

    def stop(self) -> None:
        """At ``shutdown``: start the cleanup (cancel and await the background
        tasks, drop the backend). Not awaited by the handler: an editor that
        quits may send exit, or close stdin, before the answer, and pygls
        would then cancel that handler mid-way with a traceback; ``asyncio.run``
        awaits whatever is left of the cleanup at exit instead."""
        if self._stopping is None:
            self._stopping = asyncio.create_task(self._stop())

    async def _stop(self) -> None:
        self._publisher.close()
        self._refresher.close()
        self._runs.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.link.drop()

    def _spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """A background task, referenced until done and cancelled on shutdown."""
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # --- settings ----------------------------------------------------------

    async def reload_settings(self, pushed: object) -> None:
        """Initial options, overlaid with the ``acp`` section the editor holds
        (asked for when it can answer, else what it pushed)."""
        raw = pushed
        if self._client_can("workspace.configuration"):
            try:
                answer = await self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("workspace/configuration failed: %s", exc)
                answer = [None]
            raw = answer[0] if answer else None
        raw = unwrap_section(raw)
        merged: object = self._init_options
        if isinstance(raw, dict) and isinstance(self._init_options, dict):
            merged = {**self._init_options, **raw}
        elif raw is not None:
            merged = raw
        self._apply_settings(merged)

    def _apply_settings(self, raw: object) -> None:
        self.settings, message = parse_settings(raw)
        if message is not None and message != self._settings_message:
            self.say(message, types.MessageType.Warning)
        self._settings_message = message

    # --- the backend -------------------------------------------------------

    async def _follow_backend(self) -> None:
        """Connect, fill the store, follow events; on an outage back off and
        start over (a fresh discovery, a full resync, events resumed)."""
        backoff = Backoff()
        while True:
            events: asyncio.Task[None] | None = None
            try:
                client, answer = await self.link.connect()
                if self._last_event_id is None:
                    # Replay everything after the initialize: an HTTP stream
                    # connects only after the listing below has begun, and
                    # "from now" would skip what happened in between. 0 (from
                    # the first event): an empty log, or a backend that does
                    # not say.
                    self._last_event_id = answer.last_event_id or 0
                events = self._spawn(self._consume_events(client))
                await self.sync(client)
                again = "back" if self._outage_said else "connected"
                self.log_to_client(f"ACP backend {again}: {client.description}")
                self._outage_said = False
                backoff.reset()
                await events
            except asyncio.CancelledError:
                raise
            except AcpError as exc:
                self._outage(exc)
            except Exception as exc:
                log.exception("unexpected failure following the ACP backend")
                self._outage(exc)
            finally:
                if events is not None and not events.done():
                    events.cancel()
            await self.link.drop()
            await asyncio.sleep(backoff.next())

    async def _consume_events(self, client: AcpClient) -> None:
        async for event in client.events(self._last_event_id):
            self._last_event_id = event.event_id
            try:
                await self.on_event(client, event)
            except asyncio.CancelledError:
                raise
            except TransportError:
                raise
            except Exception:
                log.exception("could not handle %s event %s", event.method, event.event_id)
        raise TransportError("the ACP event stream ended")

    async def on_event(self, client: AcpClient, event: Event) -> None:
        if isinstance(event, ValidationResultEvent):
            self.presenter.apply(event.result)
            self._observe_run(event, event.result.resource_id)
        elif isinstance(event, ValidationStarted | ValidationCompleted):
            self._observe_run(event, event.resource_id)
        elif isinstance(event, ResourceChanged):
            await self._resource_changed(client, event)
        elif isinstance(event, StreamReset):
            log.info("event stream reset (%s): resyncing", event.reason)
            await self.sync(client)

    def _observe_run(
        self,
        event: ValidationStarted | ValidationResultEvent | ValidationCompleted,
        resource_id: str,
    ) -> None:
        if resource_id in self.roots.resources and self._wants_progress():
            self._run_progress.observe(event)

    async def _resource_changed(self, client: AcpClient, event: ResourceChanged) -> None:
        self.roots.invalidate()
        if event.change == "unregistered":
            self.roots.forget(event.resource.id)
            self.presenter.changed(self.store.forget_resource(event.resource.id))
        await self.sync(client)

    async def sync(self, client: AcpClient) -> None:
        """Place folders and open documents again, then fill the store from
        the backend's latest results for every resource in play. One at a
        time: startup, folder changes and registry events may all ask."""
        async with self._sync_lock:
            await self._sync(client)

    async def _sync(self, client: AcpClient) -> None:
        folders = self.folder_paths()
        resources: dict[str, Resource] = {}
        unregistered: list[str] = []
        for folder in folders:
            placement = await self.roots.place(client, folder)
            if placement is None:
                unregistered.append(folder)
            else:
                resources[placement.resource.id] = placement.resource
        for resource in await client.resource_list():
            # Resources nested inside an open folder are in play too.
            if any(is_within(resource.root, folder) for folder in folders):
                self.roots.remember(resource)
                resources[resource.id] = resource
        self._filled.clear()
        for uri in list(self.workspace.text_documents):
            placement = await self._place_document(client, uri)
            if placement is not None:
                resources[placement.resource.id] = placement.resource
        self._announce_unregistered(unregistered)
        for resource in resources.values():
            await self.fill(client, resource)
        await self._run_placed()

    async def fill(self, client: AcpClient, resource: Resource) -> None:
        """Replace a resource's diagnostics with the backend's latest results
        and the current state of its ``acp.toml``."""
        if resource.id not in self._in_play:
            self._in_play.add(resource.id)
            self.log_to_client(f"ACP resource in play: {resource.name} ({resource.root})")
        await self._fill_results(client, resource)
        await self._check_config(client, resource)

    async def _fill_results(self, client: AcpClient, resource: Resource) -> None:
        results: list[ValidationResult] = []
        cursor: str | None = None
        since = self.store.now()
        try:
            while True:
                page = await client.validation_list_results(resource.id, after=cursor)
                results.extend(page.results)
                cursor = page.next_cursor
                if cursor is None:
                    break
        except (RemoteError, ServerFault) as exc:
            # Refused, or a stored result this client cannot read: the other
            # resources (and live events for this one) must still show.
            log.warning("cannot list the results of %s: %s", resource.name, exc)
            return
        self._filled.add(resource.id)
        self.presenter.changed(self.store.replace(resource.id, results, since))

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

    def folder_paths(self) -> list[str]:
        uris = list(self.workspace.folders) or (
            [self.workspace.root_uri] if self.workspace.root_uri else []
        )
        return [path for path in (file_path(uri) for uri in uris) if path is not None]

    def _announce_unregistered(self, folders: Iterable[str]) -> None:
        new = [folder for folder in folders if folder not in self._announced]
        if not new:
            return
        self._announced.update(new)
        names = ", ".join(new)
        commands = "; ".join(REGISTER_HINT.format(path=folder) for folder in new)
        self.say(
            f"ACP: {names} {'is' if len(new) == 1 else 'are'} not in a registered resource, so "
            f"validation diagnostics are off there. Register with: {commands}. The language "
            "server picks it up without a restart.",
            types.MessageType.Info,
        )

    def _outage(self, exc: Exception) -> None:
        log.warning("ACP backend unavailable: %s", exc)
        if not self._outage_said:
            self._outage_said = True
            self.say(
                f"ACP backend unavailable: {exc}. Diagnostics stay as they were and update "
                "when it is back; the language server reconnects by itself.",
                types.MessageType.Warning,
            )

    # --- documents ---------------------------------------------------------

    async def folders_changed(self) -> None:
        client = self.link.client
        if client is not None:
            await self._guarded(self.sync(client))

    async def document_opened(self, uri: str) -> None:
        client = self.link.client
        if client is None:
            return
        placement = await self._guarded(self._place_document(client, uri))
        if placement is not None and placement.resource.id not in self._filled:
            await self._guarded(self.fill(client, placement.resource))
        await self._run_placed()

    async def _place_document(self, client: AcpClient, uri: str) -> Placement | None:
        placement = await self.roots.place(client, uri)
        previous = self._placed.pop(uri, None)
        if previous is not None and (placement is None or previous.key != placement.key):
            self.presenter.closed(previous.key)
        if placement is None:
            return None
        self._placed[uri] = placement
        self.presenter.opened(
            placement.key, self._document(uri), clear_stale=self.settings.clear_on_edit
        )
        return placement

    def document_changed(self, uri: str) -> None:
        placement = self._placed.get(uri)
        if placement is None:
            if self.settings.run_on is RunOn.CHANGE:
                self._run_when_placed.add(uri)
            return
        self.presenter.edited(placement.key, self._document(uri), clear=self.settings.clear_on_edit)
        if self.settings.run_on is RunOn.CHANGE:
            delay = self.settings.debounce_ms / 1000
            self._runs.later(placement.resource.id, placement.logical_path, delay)

    async def document_saved(self, uri: str) -> None:
        run = self.settings.run_on is RunOn.SAVE
        placement = await self._placement(uri)
        if placement is None:
            if run:
                self._run_when_placed.add(uri)  # e.g. saved before the backend connected
            return
        work: list[Coroutine[Any, Any, object]] = []
        client = self.link.client
        if placement.logical_path == DECLARATION_FILE and client is not None:
            work.append(self._guarded(self._check_config(client, placement.resource)))
        if run:
            work.append(self._runs.now(placement.resource.id, frozenset({placement.logical_path})))
        await asyncio.gather(*work)  # the check does not wait for the run

    async def _run_placed(self) -> None:
        """The runs that saves and edits asked for before their documents
        were placed: one per resource, covering all of its paths."""
        due: dict[str, set[str]] = {}
        for uri in [uri for uri in self._run_when_placed if uri in self._placed]:
            self._run_when_placed.discard(uri)
            placement = self._placed[uri]
            due.setdefault(placement.resource.id, set()).add(placement.logical_path)
        for resource_id, paths in due.items():
            await self._runs.now(resource_id, frozenset(paths))

    def document_closed(self, uri: str) -> None:
        self._run_when_placed.discard(uri)
        placement = self._placed.pop(uri, None)
        if placement is not None:
            self.presenter.closed(placement.key)

    async def _placement(self, uri: str) -> Placement | None:
        """The document's placement; resolved now if its didOpen is still
        resolving (a save or a pull right after opening)."""
        placement = self._placed.get(uri)
        client = self.link.client
        if placement is None and client is not None:
            placement = await self._guarded(self.roots.place(client, uri))
        return placement

    def _document(self, uri: str) -> OpenDocument:
        document = self.workspace.get_text_document(uri)
        return OpenDocument(uri, document.version, document.source)

    # --- runs --------------------------------------------------------------

    async def _start_run(self, resource_id: str, paths: frozenset[str]) -> None:
        client = self.link.client
        if client is not None:
            await self._guarded(client.validation_run(resource_id, paths=tuple(sorted(paths))))

    async def _cancel_run(self, run_id: str) -> None:
        client = self.link.client
        if client is not None:
            await self._guarded(client.validation_cancel(run_id))

    async def progress_cancelled(self, token: str) -> None:
        await self._run_progress.cancel(token)

    # --- sending -----------------------------------------------------------

    def _changed(self, key: FileKey) -> None:
        if self.pull:
            self._refresher.changed("workspace")
        else:
            self._publisher.changed(key)

    def _publish(self, key: FileKey) -> None:
        params = self.presenter.publish_params(key)
        if params is not None:
            self.text_document_publish_diagnostics(params)

    def _refresh(self, _: str) -> None:
        self.workspace_diagnostic_refresh(None)

    async def document_report(
        self, uri: str, previous: str | None
    ) -> types.DocumentDiagnosticReport:
        placement = await self._placement(uri)
        if placement is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        return self.presenter.document_report(placement.key, previous)

    def workspace_report(
        self, previous: Iterable[types.PreviousResultId]
    ) -> types.WorkspaceDiagnosticReport:
        known = {item.uri: item.value for item in previous}
        return types.WorkspaceDiagnosticReport(items=self.presenter.workspace_reports(known))

    # --- helpers -----------------------------------------------------------

    async def _guarded(self, call: Coroutine[Any, Any, T]) -> T | None:
        """Await a backend call from a handler: an outage is said once, a
        refusal is logged; neither reaches the editor as a failure."""
        try:
            return await call
        except TransportError as exc:
            self._outage(exc)
        except AcpError as exc:
            log.warning("ACP refused: %s", exc)
        return None

    def say(self, message: str, kind: types.MessageType) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log_to_client(self, message: str) -> None:
        self.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message=message)
        )

    def _wants_progress(self) -> bool:
        return self.settings.progress and self._client_can("window.work_done_progress")

    def _client_can(self, dotted: str) -> bool:
        node: object = self.client_capabilities
        for part in dotted.split("."):
            node = getattr(node, part, None)
            if node is None:
                return False
        return bool(node)
