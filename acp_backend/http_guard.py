"""uvicorn's HTTP/1.1 protocol with a header timeout, a header size cap and
a connection cap.

Without them, peers that connect and say nothing (or trickle a header a
byte at a time) hold a file descriptor each until the process runs out and
cannot accept even ``GET /health``. Here every connection must deliver a
request's headers within ``header_timeout`` of opening or of its previous
response ending, in at most ``MAX_HEAD_BYTES``, and past ``max_connections``
a new connection pushes out the one that has waited longest for its headers
(or is itself refused when every connection is busy). Busy connections,
event streams included, are never touched.

The protocol is uvicorn's httptools one (llhttp): writing a burst's events
to 500 subscribers, h11's pure-Python framing cost the server ~13 % more
CPU (ADR 0035). llhttp sets no bound on a request's head, which h11 did
(16 KiB), hence ``MAX_HEAD_BYTES``.

Each request's scope also carries a ``ChunkWriter`` (``CHUNK_WRITER``): the
event stream writes a frame shared by hundreds of subscribers straight to
each connection with it, rather than through a task and ASGI ``send`` per
subscriber (ADR 0036).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
"""Bytes a connection may send before its request's headers are complete."""
CHUNK_WRITER = "acp.chunk_writer"
"""The extension (in a scope's ``extensions``) whose ``write`` is the request's ``ChunkWriter``."""
_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-length: 0\r\nconnection: close\r\n\r\n"
)


def connection_cap(wanted: int, spare: int) -> int:
    """``wanted``, lowered so that ``spare`` descriptors stay free under the soft limit."""
    if os.name == "nt":
        return wanted
    import resource  # POSIX only

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - spare))


class GuardedHttp(HttpToolsProtocol):
    """Configured by subclassing: see ``guarded_protocol``."""

    max_connections: ClassVar[int]
    header_timeout: ClassVar[float]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting_since: float | None = None  # set while no request is in progress
        self._timer: asyncio.TimerHandle | None = None
        self._cycle: object = None  # the request in progress when last looked
        self._head_bytes = 0  # received while waiting for headers
        self._in_body = False  # a request's headers are in, its body not all yet

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()
        if len(self.connections) > self.max_connections:
            waiting = [
                peer
                for peer in self.connections
                if isinstance(peer, GuardedHttp) and peer._waiting_since is not None
            ]
            oldest = min(waiting, key=lambda peer: peer._waiting_since or 0.0)
            log.debug("%d connections open: dropping one that sent nothing", len(self.connections))
            oldest._drop()

    def data_received(self, data: bytes) -> None:
        # Counted only if waiting before: when a body ends inside ``data``
        # (``on_message_complete``), the bytes before that end are the body's.
        waiting = self._waiting_since is not None
        super().data_received(data)
        if self.cycle is not self._cycle:  # a request's headers are complete
            self._cycle = self.cycle
            self._stop_waiting()
        elif waiting and self._waiting_since is not None:
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
                log.debug("a request's headers passed %d bytes: refused", MAX_HEAD_BYTES)
                self._stop_waiting()
                self.transport.write(_TOO_LARGE)
                self.transport.close()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._in_body = True
        if self.cycle is not None and self.cycle.scope is self.scope:  # not an upgrade
            writer: dict[object, object] = {"write": ChunkWriter(self.cycle)}  # a dict (ASGI)
            self.scope.setdefault("extensions", {})[CHUNK_WRITER] = writer

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_body = False
        # Answered before its body was all in (a 413 on its Content-Length):
        # the rest of the body was not the next request's head.
        if self.cycle.response_complete and not self.transport.is_closing():
            self._await_headers()

    def on_response_complete(self) -> None:
        done = self.cycle
        super().on_response_complete()
        # Unless a pipelined request started meanwhile, or this one's body is
        # still coming, the clock runs again.
        if self.cycle is done and not self._in_body and not self.transport.is_closing():
            self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        self._stop_waiting()
        self._head_bytes = 0
        self._waiting_since = time.monotonic()
        self._timer = self.loop.call_later(self.header_timeout, self._drop)

    def _stop_waiting(self) -> None:
        self._waiting_since = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _drop(self) -> None:
        self._stop_waiting()
        self.transport.abort()  # at once: the point is to free the descriptor


class ChunkWriter:
    """Writes a chunk of a response's body straight to its connection, as
    uvicorn's ``send`` would frame it. It writes nothing and says False
    whenever the chunk must go through ``send`` instead: the response not
    started, over or not chunked, the peer gone, or its buffer full
    (``send`` waits for that to drain; nothing here can)."""

    __slots__ = ("_cycle",)

    def __init__(self, cycle: RequestResponseCycle) -> None:
        self._cycle = cycle

    def __call__(self, chunk: bytes) -> bool:
        cycle = self._cycle
        if (
            not cycle.response_started
            or cycle.response_complete
            or not cycle.chunked_encoding
            or cycle.disconnected
            or cycle.flow.write_paused
        ):
            return False
        cycle.transport.write(b"%x\r\n%b\r\n" % (len(chunk), chunk))
        return True


def guarded_protocol(max_connections: int, header_timeout: float) -> type[GuardedHttp]:
    """The protocol class to give uvicorn (``http=``), with these limits."""
    limits = {"max_connections": max_connections, "header_timeout": header_timeout}
    return type("GuardedHttp", (GuardedHttp,), limits)
