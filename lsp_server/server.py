"""``AcpLanguageServer``: pygls's server, the session's host.

It owns the background tasks and the link to the backend: it connects,
follows the backend (resync, events, reconnect with backoff) and hands
what happens to the session (``lsp_server.session``), which owns the state
and tells the features. It is the editor port's host (``lsp_server.editor``)
and has no feature logic: handlers (``lsp_server.handlers``) route every LSP
method to the session or a feature, with a snapshot for each request.

It answers ``initialize`` without the features, the session or the ACP
client (ADR 0016): those load in the background afterwards
(``lsp_server.preload``) and are built on first use.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Coroutine, Generator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from acp_client import heap
from acp_client.errors import AcpError, AuthenticationError, TransportError
from lsp_server import __version__
from lsp_server.advertised import SECTION, unwrap_section
from lsp_server.backend import (
    REFUSAL_PROBE,
    STREAM_PROVEN_AFTER,
    TOKEN_SETTLE,
    BackendAddress,
    BackendLink,
    Backoff,
    Prompt,
    is_refusal,
)
from lsp_server.calls import BackendCalls
from lsp_server.capabilities import ClientSupport, as_it_behaves
from lsp_server.editor import LspEditor, report_failure
from lsp_server.notices import Notices
from lsp_server.preload import Preload
from lsp_server.stdio import PipeStdout, serve

if TYPE_CHECKING:  # loaded after the initialize answer (lsp_server.preload)
    from acp_client.client import AcpClient
    from lsp_server.features.loaded import Features
    from lsp_server.session import Session
    from lsp_server.snapshot import Snapshot

log = logging.getLogger(__name__)

T = TypeVar("T")

ANY_PROMPT = frozenset(Prompt)
CHANGE_ONLY = frozenset({Prompt.CHANGE})


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
    def __init__(self, address: BackendAddress) -> None:
        super().__init__("acp-lsp", __version__, protocol_cls=AcpProtocol)
        self.link = BackendLink(address)
        self.preload = Preload()
        self.editor = LspEditor(self)
        self.notices = Notices(self.editor.say, self.editor.log)
        self.calls = BackendCalls(self.link, self.notices)
        self.support = ClientSupport()
        self._init_options: object = None
        self._loaded: tuple[Session, Features] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_event_id: int | None = None
        self._token_reread = False  # since the stream last proved healthy
        self.output: PipeStdout | None = None  # stdout, when the protocol runs there
        self._stopping: asyncio.Task[None] | None = None

    # --- what loads after initialize (ADR 0016) ----------------------------

    @property
    def session(self) -> Session:
        """The session, built on first use (after the preload, if it runs)."""
        return self._load()[0]

    @property
    def features(self) -> Features:
        return self._load()[1]

    def _load(self) -> tuple[Session, Features]:
        if self._loaded is None:
            self.preload.wait()
            from lsp_server.features.loaded import Features
            from lsp_server.session import Session

            session = Session(
                self.calls,
                self.editor,
                self.notices,
                self.folder_uris,
                support=self.support,
                encoding=self.encoding,
                initial_settings=self._init_options,
            )
            features = Features.of(self.editor, self.calls, session)
            session.features = tuple(features)
            self._loaded = session, features
        return self._loaded

    @property
    def encoding(self) -> str:
        """The position encoding negotiated at ``initialize``."""
        negotiated = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return types.PositionEncodingKind(negotiated).value

    def folder_uris(self) -> list[str]:
        """The workspace folders' URIs as the editor sent them (pygls keys
        them unquoted), or the root URI for a client without folders."""
        folders = [folder.uri for folder in self.workspace.folders.values()]
        return folders or ([self.workspace.root_uri] if self.workspace.root_uri else [])

    async def snapshot(self, uri: str | None = None, *, listed: bool = False) -> Snapshot:
        """What a request sees (``lsp_server.snapshot``); ``listed``: once the
        document's resource is listed (``Session.snapshot_of``)."""
        self.link.wanted(Prompt.REQUEST)  # during an outage: try again now
        if uri is None:
            return self.session.snapshot()
        return await self.session.snapshot_of(uri, listed=listed)

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
        snapshot = self.session.snapshot()
        for feature in self.features:
            feature.start(snapshot)
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
        for feature in self._loaded[1] if self._loaded else ():  # none built: nothing to close
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
        task.add_done_callback(report_failure)
        return task

    # --- settings ----------------------------------------------------------

    async def reload_settings(self, pushed: object) -> None:
        """Initial options, overlaid with the ``acp`` section the editor holds
        (asked for when it can answer, else what it pushed); taken in by the
        session at once when they arrive."""
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
        self.link.wanted(Prompt.CHANGE)  # new settings may end a refusal
        merged: object = self._init_options
        if isinstance(raw, dict) and isinstance(self._init_options, dict):
            merged = {**self._init_options, **raw}
        elif raw is not None:
            merged = raw
        await self.preload.loaded()  # the settings model, without blocking the loop
        self.session.take_settings(merged)

    # --- the backend -------------------------------------------------------

    async def _follow_backend(self) -> None:
        """Connect, resync, follow events; when that fails, classify before
        retrying (``lsp_server.backend``): an outage backs off, and a request
        may hurry the next attempt; a refusal is said once and waits for
        something to change. Each attempt starts over (a fresh discovery, a
        full resync, events resumed). A local in-process fallback whose data
        dir gets a server switches to it."""
        backoff = Backoff()
        while True:
            failure: Exception | None = None
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
                await self.session.resync()
                watched = {events, moved}
                first = asyncio.FIRST_COMPLETED
                done, _ = await asyncio.wait(
                    watched, timeout=STREAM_PROVEN_AFTER, return_when=first
                )
                if not done:  # healthy for a while: a next outage is a new one
                    self.notices.healthy()
                    backoff.reset()
                    self._token_reread = False
                await asyncio.wait(watched, return_when=first)
                if not moved.done():
                    await events  # raises: the stream failed
                self.editor.log("ACP backend: a server now serves the data dir; switching")
            except asyncio.CancelledError:
                raise
            except AcpError as exc:
                failure = exc
            except Exception as exc:
                log.exception("unexpected failure following the ACP backend")
                failure = exc
            finally:
                for task in (events, moved):
                    if task is not None and not task.done():
                        task.cancel()
            self.session.backend_lost()
            await self.link.drop()
            if failure is not None:  # else moved: connect to the server at once
                await self._wait_after(failure, backoff)

    async def _wait_after(self, failure: Exception, backoff: Backoff) -> None:
        """Until the next attempt: a backoff step for an outage (a request
        may end it); for a refusal, until something changes, said once. A
        refused token is tried once more first, a moment later (or as soon
        as its file changes): the file may have been mid-rewrite."""
        token_file = self.link.token_file
        if not is_refusal(failure):
            self.notices.outage(failure)
            await self.link.retry.wait(backoff.next(), ended_by=ANY_PROMPT)
        elif isinstance(failure, AuthenticationError) and not self._token_reread:
            self._token_reread = True
            await self.link.retry.wait(TOKEN_SETTLE, ended_by=CHANGE_ONLY, watch=token_file)
        else:
            self.notices.refused(failure, str(token_file) if token_file else None)
            await self.link.retry.wait(REFUSAL_PROBE, ended_by=CHANGE_ONLY, watch=token_file)

    async def _consume_events(self, client: AcpClient) -> None:
        """Each event is taken in at once, in order: the session never awaits
        the backend while taking one (what it needs fetched runs apart)."""
        session = self.session
        async for event in client.events(self._last_event_id, partial=True):
            self._last_event_id = event.event_id
            try:
                session.take_event(event)
            except Exception:
                log.exception("could not handle %s event %s", event.method, event.event_id)
        raise TransportError("the ACP event stream ended")

    # --- commands ----------------------------------------------------------

    async def execute_command(self, name: str, arguments: Sequence[object] | None) -> object:
        """``workspace/executeCommand``: the command's argument checked
        (``InvalidParams`` when it does not fit), then run by its feature
        with the snapshot of the document it names; a backend outage or
        refusal is a message, not a failed request."""
        from lsp_server.commands import COMMANDS, BadArguments, parse

        self.link.wanted(Prompt.CHANGE)
        try:
            args = parse(COMMANDS[name], arguments)
        except BadArguments as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from exc
        snapshot = await self.snapshot(getattr(args, "uri", None))
        try:
            return await self.features.runners()[name](snapshot, args)
        except TransportError as exc:
            self.editor.say(
                f"ACP backend unavailable: {exc}. Nothing was changed.", types.MessageType.Error
            )
        except AcpError as exc:
            self.editor.say(
                f"ACP refused {name}: {exc}. Nothing was changed.", types.MessageType.Error
            )
        return None


async def _awaited(awaitable: Awaitable[Any]) -> None:
    await awaitable
