"""``AcpLanguageServer``: the session, the one object that owns shared state.

It holds the backend link, the settings, what the client supports, where
each document belongs (``roots``) and the background tasks; it follows the
backend (connect, resync, events) and tells the features (``features/``)
what happened. It has no feature logic of its own: handlers
(``lsp_server.handlers``) route every LSP method to a feature.

It answers ``initialize`` without the features, the settings model or the
ACP client (ADR 0016): those load in the background afterwards
(``lsp_server.preload``) and are built on first use.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from acp_client import heap
from acp_client.errors import AcpError, TransportError, Unsupported
from acp_client.paths import is_within
from lsp_server import __version__
from lsp_server.advertised import SECTION, unwrap_section
from lsp_server.backend import (
    STREAM_PROVEN_AFTER,
    BackendLink,
    Backoff,
    Target,
)
from lsp_server.capabilities import ClientSupport, as_it_behaves
from lsp_server.notices import Notices
from lsp_server.preload import Preload
from lsp_server.roots import Placement, Roots, file_path
from lsp_server.stdio import PipeStdout, serve

if TYPE_CHECKING:  # loaded after the initialize answer (lsp_server.preload)
    from acp_client.client import AcpClient
    from acp_client.events import Event
    from acp_client.models import Resource
    from lsp_server.features.loaded import Features
    from lsp_server.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")


class AcpProtocol(LanguageServerProtocol):
    _server: AcpLanguageServer

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        behaves = as_it_behaves(params)
        if behaves is not params:
            log.info("client %s: counting columns as it does (ADR 0013)", params.client_info)
        result = yield from super().lsp_initialize(behaves)
        if not self._server.support.pull_diagnostics:
            # Advertising pull to a push client would make it ask, and show both.
            result.capabilities.diagnostic_provider = None
        return result


class AcpLanguageServer(LanguageServer):
    def __init__(self, target: Target) -> None:
        super().__init__("acp-lsp", __version__, protocol_cls=AcpProtocol)
        self.link = BackendLink(target)
        self.preload = Preload()
        self._settings: Settings | None = None
        self._features: Features | None = None
        self.support = ClientSupport()
        self.roots = Roots()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._placed: dict[str, Placement] = {}
        self._sync_lock = asyncio.Lock()
        self._in_play: dict[str, Resource] = {}
        self._last_event_id: int | None = None
        self.notices = Notices(self.say, self.log_to_client)
        self._init_options: object = None
        self.output: PipeStdout | None = None  # stdout, when the protocol runs there
        self._settings_message: str | None = None
        self._stopping: asyncio.Task[None] | None = None

    # --- what loads after initialize (ADR 0016) ----------------------------

    @property
    def features(self) -> Features:
        """The features, built on first use (after the preload, if it runs)."""
        if self._features is None:
            self.preload.wait()
            from lsp_server.features.loaded import Features

            self._features = Features.of(self)
        return self._features

    @property
    def settings(self) -> Settings:
        """The settings in force: the initial options until ``initialized``
        has read the editor's (parsed on first use, not at ``initialize``)."""
        if self._settings is None:
            self._apply_settings(self._init_options)
            assert self._settings is not None
        return self._settings

    @property
    def encoding(self) -> str:
        """The position encoding negotiated at ``initialize``."""
        negotiated = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return types.PositionEncodingKind(negotiated).value

    def output_backlog(self) -> int:
        """Bytes written to the editor that it has not read yet (stdio only)."""
        return self.output.pending if self.output is not None else 0

    def notify_json(self, method: str, params_json: str) -> None:
        """Send a notification whose params are already serialised: no
        lsprotocol objects, no cattrs pass (ADR 0015), no second dump.
        Framed as pygls frames what it sends. On stdio it is bulk: an
        answer written later may go out first (ADR 0018)."""
        protocol = self.protocol
        if protocol.writer is None:
            return
        body = f'{{"jsonrpc": "2.0", "method": {json.dumps(method)}, "params": {params_json}}}'
        data = body.encode()
        if protocol._include_headers:
            data = b"Content-Length: %d\r\n\r\n%s" % (len(data), data)
        try:
            if self.output is not None:  # on stdio: behind answers still waiting
                self.output.write_bulk(data)
                return
            written = protocol.writer.write(data)
        except BrokenPipeError:
            log.warning("the editor closed the connection; %s not sent", method)
            return
        if inspect.isawaitable(written):  # a WebSocket's send
            self.spawn(_awaited(written))

    def _start_io_async(
        self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
    ) -> None:
        """pygls's own, with stdin read on the loop (``stdio.serve``)."""
        serve(self, stdin, stdout)

    # --- lifecycle ---------------------------------------------------------

    def setup(self, params: types.InitializeParams) -> None:
        """At ``initialize``: what the client supports, and the initial
        options (read with the editor's settings at ``initialized``)."""
        self.support = ClientSupport.of(params)
        self._init_options = unwrap_section(params.initialization_options)

    def start(self) -> None:
        """At ``initialized``: load the rest in the background, then (a task
        of the session's, cancelled quietly if the editor goes away first)
        read the settings and start the features and the backend tasks."""
        self.preload.start()
        self.spawn(self._start())

    async def _start(self) -> None:
        await self.reload_settings(None)
        if self._stopping is not None:
            return  # shut down while the editor was answering
        for feature in self.features:
            feature.start()
        self.spawn(self._follow_backend())

    def stop(self) -> None:
        """At ``shutdown``: start the cleanup (cancel and await the background
        tasks, drop the backend). Not awaited by the handler: an editor that
        quits may send exit, or close stdin, before the answer, and pygls
        would then cancel that handler mid-way with a traceback; ``asyncio.run``
        awaits whatever is left of the cleanup at exit instead."""
        if self._stopping is None:
            self._stopping = asyncio.create_task(self._stop())

    async def _stop(self) -> None:
        for feature in self._features or ():  # none built: nothing to close
            feature.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.link.drop()

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
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
        if self.support.configuration:
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
        await self.preload.loaded()  # the settings model, without blocking the loop
        self._apply_settings(merged)

    def _apply_settings(self, raw: object) -> None:
        self.preload.wait()
        from lsp_server.settings import Settings, parse_settings

        before = self._settings or Settings()
        self._settings, message = parse_settings(raw)
        if message is not None and message != self._settings_message:
            self.say(message, types.MessageType.Warning)
        self._settings_message = message
        changed = (
            self.settings.model_dump(by_alias=True).items()
            - before.model_dump(by_alias=True).items()
        )
        if changed:  # in the editor's log: when a change took effect, and which
            shown = ", ".join(f"{name}={value}" for name, value in sorted(changed))
            self.log_to_client(f"ACP settings now in force: {shown}")

    # --- the backend -------------------------------------------------------

    async def _follow_backend(self) -> None:
        """Connect, resync, follow events; on an outage back off and start
        over (a fresh discovery, a full resync, events resumed). A local
        in-process fallback whose data dir gets a server switches to it."""
        backoff = Backoff()
        while True:
            events: asyncio.Task[None] | None = None
            moved: asyncio.Task[bool] | None = None
            try:
                client, answer = await self.link.connect()
                heap.settle()  # all the code it runs on is loaded by now
                if self._last_event_id is None:
                    # Replay everything after the initialize: an HTTP stream
                    # connects only after the listing below has begun, and
                    # "from now" would skip what happened in between. 0 (from
                    # the first event): an empty log, or a backend that does
                    # not say.
                    self._last_event_id = answer.last_event_id or 0
                events = self.spawn(self._consume_events(client))
                moved = self.spawn(self.link.moved.wait())
                self.notices.connected(client.description)
                await self.sync(client)
                watched = {events, moved}
                first = asyncio.FIRST_COMPLETED
                done, _ = await asyncio.wait(
                    watched, timeout=STREAM_PROVEN_AFTER, return_when=first
                )
                if not done:  # healthy for a while: a next outage is a new one
                    self.notices.healthy()
                    backoff.reset()
                await asyncio.wait(watched, return_when=first)
                if not moved.done():
                    await events  # raises: the stream failed
                self.log_to_client("ACP backend: a server now serves the data dir; switching")
            except asyncio.CancelledError:
                raise
            except AcpError as exc:
                self.notices.outage(exc)
            except Exception as exc:
                log.exception("unexpected failure following the ACP backend")
                self.notices.outage(exc)
            finally:
                for task in (events, moved):
                    if task is not None and not task.done():
                        task.cancel()
            for feature in self.features:
                feature.backend_lost()
            await self.link.drop()
            if not self.link.moved.is_set():
                await asyncio.sleep(backoff.next())

    async def _consume_events(self, client: AcpClient) -> None:
        async for event in client.events(self._last_event_id, partial=True):
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
        from acp_client.events import ResourceChanged, StreamReset  # loaded: events flow

        if isinstance(event, ResourceChanged):
            self.roots.invalidate()
            if event.change == "unregistered":
                self.roots.forget(event.resource.id)
        for feature in self.features:
            await feature.on_event(client, event)
        if isinstance(event, StreamReset):
            log.info("event stream reset (%s): resyncing", event.reason)
            await self.sync(client)
        elif isinstance(event, ResourceChanged):
            await self.sync(client)

    async def sync(self, client: AcpClient) -> None:
        """Place folders and open documents again, then let every feature
        rebuild from the backend for the resources in play. One at a time:
        startup, folder changes and registry events may all ask."""
        async with self._sync_lock:
            resources = await self._place_all(client)
            for resource_id in self._in_play.keys() - resources.keys():
                # Its folder was removed or it was unregistered: no more updates.
                self.roots.forget(resource_id)
                gone = self._in_play.pop(resource_id)
                self.log_to_client(f"ACP resource out of play: {gone.name} ({gone.root})")
            for resource in resources.values():
                if resource.id not in self._in_play:
                    self.log_to_client(f"ACP resource in play: {resource.name} ({resource.root})")
            self._in_play = resources
            for feature in self.features:
                await feature.resync(client, resources)

    async def _place_all(self, client: AcpClient) -> dict[str, Resource]:
        """The resources in play: the folders' own, those nested in them and
        those of open documents."""
        if not client.supports("resource.resolve"):
            self.notices.degraded("resource.resolve")
            return {}
        self.roots.set_folders(self.folder_uris())
        folders = self.folder_paths()
        resources: dict[str, Resource] = {}
        unregistered: list[str] = []
        try:
            for folder in folders:
                placement = await self.roots.place(client, folder)
                if placement is None:
                    unregistered.append(folder)
                else:
                    resources[placement.resource.id] = placement.resource
            for resource in await self.if_offered(client.resource_list()) or ():
                if any(is_within(resource.root, folder) for folder in folders):
                    self.roots.remember(resource)
                    resources[resource.id] = resource
            for uri in list(self.workspace.text_documents):
                placement = await self._place_document(client, uri)
                if placement is not None:
                    resources[placement.resource.id] = placement.resource
        except Unsupported as exc:  # a backend that did not list its operations
            self.notices.degraded(exc.operation)
            return {}
        self.notices.unregistered(unregistered, resources.values())
        return resources

    def folder_uris(self) -> list[str]:
        """The workspace folders' URIs (the root URI for a client without folders)."""
        return list(self.workspace.folders) or (
            [self.workspace.root_uri] if self.workspace.root_uri else []
        )

    def folder_paths(self) -> list[str]:
        return [path for path in map(file_path, self.folder_uris()) if path is not None]

    # --- documents ---------------------------------------------------------

    async def folders_changed(self) -> None:
        client = self.link.client
        if client is not None:
            await self.guarded(self.sync(client))

    async def document_opened(self, uri: str) -> None:
        client = self.link.client
        if client is None:
            return
        placement = await self.guarded(self._place_document(client, uri))
        if placement is not None:
            for feature in self.features:
                await feature.document_opened(uri, placement)

    async def _place_document(self, client: AcpClient, uri: str) -> Placement | None:
        placement = await self.roots.place(client, uri)
        previous = self._placed.pop(uri, None)
        if previous is not None and (placement is None or previous.key != placement.key):
            for feature in self.features:
                feature.document_unplaced(uri, previous)
        if placement is None:
            return None
        self._placed[uri] = placement
        self.roots.note_uri(placement.key, uri)
        for feature in self.features:
            feature.document_placed(uri, placement)
        return placement

    def document_changed(self, uri: str) -> None:
        placement = self._placed.get(uri)
        for feature in self.features:
            feature.document_edited(uri, placement)

    async def document_saved(self, uri: str) -> None:
        self.link.check_moved()  # a save is when sharing a server matters most
        placement = await self.placement(uri)
        await asyncio.gather(*(feature.document_saved(uri, placement) for feature in self.features))

    def document_closed(self, uri: str) -> None:
        placement = self._placed.pop(uri, None)
        for feature in self.features:
            feature.document_closed(uri, placement)

    def placed(self, uri: str) -> Placement | None:
        """Where an open document was placed (None: not, or not yet)."""
        return self._placed.get(uri)

    async def placement(self, uri: str) -> Placement | None:
        """The document's placement; resolved now if its didOpen is still
        resolving (a save or a pull right after opening)."""
        placement = self._placed.get(uri)
        client = self.link.client
        if placement is None and client is not None:
            placement = await self.guarded(self.roots.place(client, uri))
        return placement

    # --- helpers -----------------------------------------------------------

    async def guarded(self, call: Coroutine[Any, Any, T]) -> T | None:
        """Await a backend call from a handler: an outage is said once, a
        refusal is logged; neither reaches the editor as a failure."""
        try:
            return await call
        except TransportError as exc:
            self.notices.outage(exc)
        except Unsupported as exc:
            self.notices.degraded(exc.operation)
        except AcpError as exc:
            log.warning("ACP refused: %s", exc)
        return None

    async def if_offered(self, call: Coroutine[Any, Any, T]) -> T | None:
        """Await a backend call whose operation the backend may lack (said
        once, None); outages propagate to the caller."""
        try:
            return await call
        except Unsupported as exc:
            self.notices.degraded(exc.operation)
            return None

    def say(self, message: str, kind: types.MessageType) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log_to_client(self, message: str) -> None:
        self.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message=message)
        )


async def _awaited(awaitable: Awaitable[Any]) -> None:
    await awaitable
