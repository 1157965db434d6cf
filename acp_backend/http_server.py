"""``acp-backend serve``: the facade over HTTP (JSON-RPC) and SSE (events).

Routes: ``POST /acp/v1`` (JSON-RPC 2.0, batches allowed), ``GET
/acp/v1/events`` (SSE, honours ``Last-Event-ID``), ``GET /health`` (no token,
reveals nothing). Everything but ``/health`` needs ``Authorization: Bearer
<token>``, where the token is fresh per start and published only in the
0600 ``backend.json`` of the data dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable, Generator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from acp_backend.event_stream import FanOut, StoredJson, nothing_stored, sse_frames
from acp_backend.facade import BackendFacade
from acp_backend.http_guard import CHUNK_WRITER, connection_cap, guarded_protocol
from acp_backend.rpc import handle_body
from acp_client import heap, jsonrpc, threads
from acp_client.discovery import (
    LOCK_FILE,
    BackendInfo,
    connect_host,
    discover,
    read_backend_file,
)
from acp_client.errors import InvalidRequest
from acp_client.head_start import BACKEND_FILE, DEFAULT_FACADE
from acp_client.paths import default_data_dir
from acp_client.transport import Facade
from acp_client.transport.inprocess import load_facade
from acp_client.version import __version__

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
KEEPALIVE_INTERVAL = 15.0
# A connection has this long to deliver a request's headers, counted from
# when it opened or its previous response ended (slow or silent peers).
HEADER_TIMEOUT = 10.0
# Open connections at most; fewer when the file descriptor limit is lower.
MAX_CONNECTIONS = 512
# Also how many connections asyncio accepts in one go (uvicorn's default is
# 2,048), before the cap sees them a few loop turns later.
LISTEN_BACKLOG = 100
# Descriptors kept free under the limit: the store, validators' pipes, logs,
# and the connections accepted in the turns before the cap acts on them.
_SPARE_DESCRIPTORS = 64 + 4 * LISTEN_BACKLOG
MAX_EVENT_ID = (1 << 63) - 1  # SQLite's largest integer


class UnsafeBind(ValueError):
    """A non-loopback bind without TLS and without the explicit insecure flag."""


class AlreadyServing(ValueError):
    """Another live backend already serves this data dir (and owns its backend.json)."""


def create_app(
    facade: Facade,
    token: str,
    *,
    keepalive_interval: float = KEEPALIVE_INTERVAL,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Starlette:
    """The ASGI app. ``app.state.closing`` ends every event stream when set.
    With the reference backend, a result's event carries the JSON its store
    wrote, rather than its findings written again (``Store.stream_bodies``)."""
    closing = asyncio.Event()
    stored_json: StoredJson = nothing_stored
    if isinstance(facade, BackendFacade):
        stored_json = facade.services.store.stream_bodies()
    fan_out = FanOut(facade, closing, stored_json)

    async def health(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def rpc(request: Request) -> Response:
        try:
            body = await _read_capped(request, max_body_bytes)
        except _TooLarge:
            error = InvalidRequest(
                f"request body exceeds {max_body_bytes} bytes",
                remedy="split the batch or send less",
            )
            return JSONResponse(jsonrpc.failure(None, error.to_error_object()), status_code=413)
        except ClientDisconnect:
            return Response(status_code=400)
        reply = await handle_body(facade, body)
        return Response(status_code=204) if reply is None else JSONResponse(reply)

    async def events(request: Request) -> Response:
        if request.scope.get("http_version") == "1.0":
            # A stream has no length to send, and HTTP/1.0 has no chunks:
            # said plainly rather than sent in a framing it cannot read.
            return JSONResponse(
                {"error": "the event stream needs HTTP/1.1 (chunked transfer)"},
                status_code=505,
            )
        raw_after = request.headers.get("last-event-id", "").strip()
        if raw_after and not _is_event_id(raw_after):
            return JSONResponse(
                {"error": "Last-Event-ID must be a non-negative integer event id"},
                status_code=400,
            )
        after = int(raw_after) if raw_after else None
        partial = request.query_params.get("partial") == "1"  # ADR 0017
        direct = request.scope.get("extensions", {}).get(CHUNK_WRITER, {}).get("write")
        stream = sse_frames(fan_out, after, keepalive_interval, partial, direct)
        return StreamingResponse(
            stream,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    app = Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/acp/v1", rpc, methods=["POST"]),
            Route("/acp/v1/events", events, methods=["GET"]),
        ],
        middleware=[Middleware(RequireToken, token=token, open_paths={"/health"})],
    )
    app.state.closing = closing
    return app


class RequireToken:
    """Answers 401 to any request without the bearer token, before routing,
    so nothing else runs for it (not even a 404). Constant-time compare."""

    def __init__(self, app: ASGIApp, token: str, open_paths: set[str]) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()
        self._open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in self._open_paths:
            given = Headers(scope=scope).get("authorization", "").encode()
            if not hmac.compare_digest(given, self._expected):
                refusal = JSONResponse(
                    {"error": "missing or wrong bearer token"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)


def _is_event_id(text: str) -> bool:
    # Length first: int() refuses (ValueError) beyond 4,300 digits.
    return len(text) <= 19 and text.isascii() and text.isdigit() and int(text) <= MAX_EVENT_ID


class _TooLarge(Exception):
    pass


async def _read_capped(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _TooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _TooLarge
    return bytes(body)


# --- serving ---------------------------------------------------------------------


def check_bind(host: str, tls: bool, insecure_bind: bool) -> None:
    """Refuse to expose a token-guarded plain-HTTP port beyond this machine."""
    if host == "localhost" or tls or insecure_bind:
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UnsafeBind(
            f"refusing to bind {host!r} without TLS: pass --tls-cert and --tls-key, "
            "or --insecure-bind if a trusted proxy terminates TLS"
        )


def write_backend_file(data_dir: Path, info: BackendInfo) -> Path:
    """Atomically publish ``backend.json`` (mode 0600: it holds the token)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    target = data_dir / BACKEND_FILE
    temp = data_dir / f".{BACKEND_FILE}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(info.model_dump_json(indent=2))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, target)
    return target


def remove_backend_file(path: Path, token: str) -> None:
    """Remove ``backend.json`` unless another server has replaced it since."""
    try:
        current = BackendInfo.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return
    if hmac.compare_digest(current.token, token):
        path.unlink(missing_ok=True)


class AcpServer(uvicorn.Server):
    """uvicorn, made to end the event streams first on shutdown (else it would
    wait on them forever) and to close the facade afterwards.

    ``on_started`` runs once the server accepts requests, with its signal
    handlers in place: the place to publish ``backend.json``, so that a
    SIGTERM can never end the process between publishing and handling it.
    ``on_shutdown`` runs before uvicorn re-raises a captured SIGTERM, which
    ends the process at once: the place to withdraw ``backend.json``.
    """

    def __init__(
        self,
        app: Starlette,
        facade: Facade,
        on_started: Callable[[], None] = lambda: None,
        on_shutdown: Callable[[], None] = lambda: None,
        *,
        header_timeout: float = HEADER_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        **options: Any,
    ) -> None:
        """``app`` comes from ``create_app``; ``options`` go to ``uvicorn.Config``.

        ``max_connections`` is lowered to what the descriptor limit allows.
        """
        protocol = guarded_protocol(
            connection_cap(max_connections, _SPARE_DESCRIPTORS), header_timeout
        )
        config = uvicorn.Config(
            app,
            http=protocol,
            backlog=LISTEN_BACKLOG,
            lifespan="off",
            timeout_graceful_shutdown=5,
            **options,
        )
        super().__init__(config)
        self._closing: asyncio.Event = app.state.closing
        self._facade: Facade | None = facade
        self._on_started = on_started
        self._on_shutdown = on_shutdown

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """uvicorn's SIGINT and SIGTERM, and SIGHUP too: a closed terminal must
        also end the validators and withdraw ``backend.json``."""
        with super().capture_signals():
            hangup = getattr(signal, "SIGHUP", None)
            if hangup is None or threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = signal.signal(hangup, self.handle_exit)
            try:
                yield
            finally:  # restored first, so uvicorn re-raises it with its usual effect
                signal.signal(hangup, previous)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_started()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._closing.set()
        self._on_shutdown()
        await super().shutdown(sockets)
        await self.close_facade()

    async def close_facade(self) -> None:
        facade, self._facade = self._facade, None
        if facade is not None:
            await facade.aclose()

    async def serve_and_close(self, sock: socket.socket) -> None:
        try:
            await self.serve(sockets=[sock])
        finally:
            await self.close_facade()


def listen(host: str, port: int) -> socket.socket:
    """A listening socket, so the real port is known before uvicorn starts.

    Made with an explicit ``IPPROTO_TCP``: asyncio only sets TCP_NODELAY on
    connections accepted from such a socket, and without it every response
    waits ~40 ms for a delayed ACK (Nagle).
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        if os.name != "nt":  # on Windows SO_REUSEADDR would allow port hijacking
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


LOCK_PATIENCE = 1.0  # a client's probe holds the lock for microseconds; a server, for good


def take_serve_lock(data_dir: Path) -> int | None:
    """Hold ``serve.lock`` for this process's life (the descriptor; None
    where there is no flock, and discovery alone decides).

    Raises ``AlreadyServing`` while another server holds it, however slow
    that server is to answer: the lock, not ``/health``, is the proof.
    """
    try:
        import fcntl
    except ImportError:
        return None
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + LOCK_PATIENCE
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            if time.monotonic() < deadline:
                time.sleep(0.02)
                continue
            os.close(fd)
        running = read_backend_file(data_dir)
        where = f" on port {running.port}" if running else ""
        who = f"a backend (pid {running.pid})" if running else "another acp-backend serve"
        raise AlreadyServing(f"{who} already serves {data_dir}{where}")


def serve(
    data_dir: Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    insecure_bind: bool = False,
    facade: str = DEFAULT_FACADE,
    keepalive_interval: float = KEEPALIVE_INTERVAL,
) -> int:
    """Serve until SIGINT/SIGTERM; returns the process exit status.

    Raises ``UnsafeBind`` for a refused bind, ``AlreadyServing`` when a live
    backend owns the data dir, and ``ValueError`` for half a TLS
    configuration (all ``ValueError``); the CLI turns them into a message.
    """
    if (tls_cert is None) != (tls_key is None):
        raise ValueError("--tls-cert and --tls-key go together")
    check_bind(host, tls_cert is not None, insecure_bind)
    data_dir = (data_dir or default_data_dir()).expanduser().resolve()
    lock = take_serve_lock(data_dir)
    try:
        if lock is None and (running := asyncio.run(discover(data_dir))) is not None:
            raise AlreadyServing(
                f"a backend (pid {running.pid}) already serves {data_dir} on port {running.port}"
            )
        return _serve_locked(
            data_dir,
            host=host,
            port=port,
            tls_cert=tls_cert,
            tls_key=tls_key,
            facade=facade,
            keepalive_interval=keepalive_interval,
        )
    finally:
        if lock is not None:
            os.close(lock)


def _serve_locked(
    data_dir: Path,
    *,
    host: str,
    port: int,
    tls_cert: Path | None,
    tls_key: Path | None,
    facade: str,
    keepalive_interval: float,
) -> int:
    sock = listen(host, port)
    try:
        backend = load_facade(facade, data_dir)
    except BaseException:
        sock.close()
        raise
    if isinstance(backend, BackendFacade):  # another facade prepares itself
        backend.serving()
    token = secrets.token_urlsafe(32)
    app = create_app(backend, token, keepalive_interval=keepalive_interval)
    info = BackendInfo(
        port=sock.getsockname()[1],
        token=token,
        pid=os.getpid(),
        data_dir=str(data_dir),
        started_at=datetime.now(UTC),
        version=__version__,
        scheme="https" if tls_cert else "http",
        host=connect_host(host),
        tls_cert=str(tls_cert.resolve()) if tls_cert else None,
    )
    backend_file = data_dir / BACKEND_FILE

    def publish() -> None:
        write_backend_file(data_dir, info)
        log.info("ACP backend on %s (token in %s)", info.url, backend_file)

    server = AcpServer(
        app,
        backend,
        on_started=publish,
        on_shutdown=lambda: remove_backend_file(backend_file, token),
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
        access_log=log.isEnabledFor(logging.DEBUG),  # one line per request: --verbose only
    )
    heap.settle()
    threads.quick_handoffs()
    try:
        asyncio.run(server.serve_and_close(sock))
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the SIGINT it handled; the shutdown was clean
    finally:
        remove_backend_file(backend_file, token)
        sock.close()
    return 0
