"""A backend that lies about where a plan writes, for the server suite.

A server presenting ACP must not trust its backend with the editor's file
system: a compromised or buggy backend may name a change path that climbs
out of the resource, is absolute, or passes through a symlink that leads
out. The reference backend refuses to make such a plan, so the kit puts a
relay in front of the backend it checks: every call and event goes through
unchanged, except ``plan.preview`` of the plans it was told to lie about,
whose changes then name the lying path. The relay listens on 127.0.0.1 on
an ephemeral port and is given to the server under test as ``{acp}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from acp_client import jsonrpc
from acp_client.errors import ParseError
from acp_client.transport.http import EVENTS_PATH, RPC_PATH
from acp_conformance.wire import Message, Wire

KEEPALIVE_S = 1.0  # a quiet stream still shows it is alive
STARTUP_S = 10.0


def lie(preview: Message, path: str) -> Message:
    """``preview`` with every change (and its edits) moved to ``path``."""
    changes = []
    for change in preview["changes"]:
        edits = [{**e, "location": {**e["location"], "path": path}} for e in change["edits"]]
        changes.append({**change, "path": path, "old_path": None, "edits": edits})
    return {**preview, "changes": changes, "moved": []}


class LyingRelay:
    """The relay, served from a thread of its own (the kit's event loop only
    runs while a check waits on it); ``lies`` maps plan ids to the path their
    preview names instead of the true one."""

    def __init__(self, wire_factory: Callable[[], Wire]) -> None:
        self.lies: Mapping[str, str] = {}
        self._wire_factory = wire_factory
        self._wire: Wire | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._closing: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.url = ""

    def start(self) -> str:
        """Start serving; the base URL (``http://127.0.0.1:PORT``)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = Starlette(
            routes=[
                Route(RPC_PATH, self._rpc, methods=["POST"]),
                Route(EVENTS_PATH, self._events, methods=["GET"]),
            ]
        )
        config = uvicorn.Config(
            app, lifespan="off", log_level="warning", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        started = threading.Event()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._serve(sock, started)), name="acp-liar", daemon=True
        )
        self._thread.start()
        if not started.wait(STARTUP_S):
            raise RuntimeError(f"the lying relay did not start within {STARTUP_S:g} s")
        return self.url

    async def _serve(self, sock: socket.socket, started: threading.Event) -> None:
        assert self._server is not None
        self._loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()
        self._wire = self._wire_factory()
        started.set()
        try:
            await self._server.serve(sockets=[sock])
        finally:
            await self._wire.aclose()
            sock.close()

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        if self._loop is not None and self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)  # the event streams end first
        self._server.should_exit = True
        self._thread.join(STARTUP_S)
        self._server = self._thread = None

    async def _rpc(self, request: Request) -> Response:
        assert self._wire is not None
        try:
            body = json.loads(await request.body())
            method, params = body["method"], body.get("params", {})
        except (ValueError, KeyError, TypeError):
            refusal = ParseError("the relay reads one JSON-RPC request")
            return JSONResponse(jsonrpc.failure(None, refusal.to_error_object()))
        answer = await self._wire.call(method, params)
        result = answer.get("result")
        if method == "plan.preview" and isinstance(result, dict):
            lied = self.lies.get(str(result.get("plan_id")))
            if lied is not None:
                answer = {**answer, "result": lie(result, lied)}
        return JSONResponse({**answer, "id": body.get("id")})

    async def _events(self, request: Request) -> Response:
        last = request.headers.get("last-event-id") or request.query_params.get("after")
        after = int(last) if last and last.isdigit() else None
        return StreamingResponse(self._frames(after), media_type="text/event-stream")

    async def _frames(self, after: int | None) -> AsyncIterator[str]:
        """The backend's events as SSE frames, keep-alives in between, until
        the relay stops."""
        assert self._wire is not None and self._closing is not None
        queue: asyncio.Queue[Message] = asyncio.Queue()

        async def pump() -> None:
            assert self._wire is not None
            async with contextlib.aclosing(self._wire.events(after)) as stream:
                async for message in stream:
                    await queue.put(message)

        pumping = asyncio.create_task(pump())
        closing = asyncio.create_task(self._closing.wait())
        getter: asyncio.Task[Message] | None = None
        try:
            yield ": relayed\n\n"
            while not pumping.done():
                getter = getter or asyncio.create_task(queue.get())
                done, _ = await asyncio.wait(
                    {getter, closing}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED
                )
                if closing in done:
                    return
                if getter in done:
                    yield _frame(getter.result())
                    getter = None
                else:
                    yield ": keep-alive\n\n"
        finally:
            for task in (pumping, closing, getter):
                if task is not None:
                    task.cancel()


def _frame(message: Message) -> str:
    params: Any = message.get("params")
    event_id = params.get("event_id") if isinstance(params, dict) else None
    data = json.dumps(message, separators=(",", ":"))
    return f"id: {event_id}\ndata: {data}\n\n" if event_id is not None else f"data: {data}\n\n"
