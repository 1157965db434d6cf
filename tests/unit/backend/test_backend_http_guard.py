"""``GuardedHttp`` byte by byte: what counts towards a request's head cap
when a refused body is still arriving, fed to the protocol in chunks whose
boundaries the test chooses (a socket would choose them at random); and the
``ChunkWriter`` it gives each request, on the wire.

``tests/integration/test_serve_limits.py`` covers the same over a real socket."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from acp_backend.http_guard import CHUNK_WRITER, MAX_HEAD_BYTES, GuardedHttp, guarded_protocol
from tests.support.chunked import dechunked


async def refuse_unread(scope: Any, receive: Any, send: Any) -> None:
    """An app that answers 413 at once, its body unread (as a too-long Content-Length is)."""
    await send(
        {"type": "http.response.start", "status": 413, "headers": [(b"content-length", b"0")]}
    )
    await send({"type": "http.response.body", "body": b""})


class Wire(asyncio.Transport):
    """The server's side of a connection: what it wrote, whether it closed."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = bytearray()
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.sent += data

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(
            name, default
        )


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def connection(app: Any) -> GuardedHttp:
    return guarded_protocol(max_connections=8, header_timeout=30.0)(
        Config(app=app, lifespan="off"), ServerState(), {}
    )


async def test_the_rest_of_a_refused_body_is_not_counted_as_the_next_head() -> None:
    protocol = connection(refuse_unread)
    wire = Wire()
    protocol.connection_made(wire)
    length = 4 * MAX_HEAD_BYTES
    protocol.data_received(
        f"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()
    )
    await settle()
    assert wire.sent.startswith(b"HTTP/1.1 413 "), bytes(wire.sent)
    answered = len(wire.sent)
    # Past the cap after the answer, with the body still coming...
    protocol.data_received(b"x" * (2 * MAX_HEAD_BYTES))
    # ...and its end inside one chunk larger than the cap.
    protocol.data_received(b"x" * (2 * MAX_HEAD_BYTES))
    await settle()
    assert not wire.closed and len(wire.sent) == answered, bytes(wire.sent[answered:])
    protocol.data_received(b"GET /y HTTP/1.1\r\nHost: x\r\n\r\n")
    await settle()
    assert wire.sent[answered:].startswith(b"HTTP/1.1 413 ")  # the next request, answered
    # A head that does pass the cap is still refused.
    protocol.data_received(b"GET /z HTTP/1.1\r\n" + b"X-Filler: " + b"a" * (MAX_HEAD_BYTES + 1))
    assert wire.closed and b"431" in wire.sent
    protocol.connection_lost(None)


async def test_a_chunk_writer_frames_as_send_does_and_refuses_where_send_would_wait() -> None:
    said: dict[str, bool] = {}

    async def stream(scope: Any, receive: Any, send: Any) -> None:
        write = scope["extensions"][CHUNK_WRITER]["write"]
        said["before the head"] = write(b"early")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        said["streaming"] = write(b"abc")
        protocol.pause_writing()  # the peer's buffer is full: send would wait for it
        said["paused"] = write(b"held")
        protocol.resume_writing()
        await send({"type": "http.response.body", "body": b"de", "more_body": True})
        said["resumed"] = write(b"fgh")
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        said["after the end"] = write(b"late")

    protocol = connection(stream)
    wire = Wire()
    protocol.connection_made(wire)
    protocol.data_received(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    await settle()
    assert said == {
        "before the head": False,
        "streaming": True,
        "paused": False,
        "resumed": True,
        "after the end": False,
    }
    head, body = bytes(wire.sent).split(b"\r\n\r\n", 1)
    assert b"transfer-encoding: chunked" in head
    assert dechunked(body, whole=True) == b"abcdefgh"
    protocol.connection_lost(None)


async def test_a_chunk_writer_writes_nothing_once_its_peer_is_gone() -> None:
    gone = asyncio.Event()
    said: list[bool] = []

    async def stream(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await gone.wait()
        said.append(scope["extensions"][CHUNK_WRITER]["write"](b"to no one"))

    protocol = connection(stream)
    wire = Wire()
    protocol.connection_made(wire)
    protocol.data_received(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    await settle()
    written = len(wire.sent)
    protocol.connection_lost(None)
    gone.set()
    await settle()
    assert said == [False] and len(wire.sent) == written
