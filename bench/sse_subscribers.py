"""SSE subscribers for ``bench_fanout.py``: many connections, little parsing.

``python bench/sse_subscribers.py URL TOKEN COUNT COMPLETIONS``: opens COUNT
``GET /acp/v1/events`` connections, prints ``ready`` once every one has its
answer's head, then reads until each has seen COMPLETIONS
``validation.completed`` events (or a deadline passes) and prints one JSON
line: ``{"errors": [...], "events": [...], "completions": [...], "delays":
[...]}`` (what ended connections early, per connection counts, and every
event's delay in ms from its ``at`` to its arrival). Each connection is an
``asyncio.Protocol`` that takes the chunked body apart as it arrives and
finds ``at`` in each frame: httpx, or even a task per connection, would
make these processes the bottleneck rather than the server.
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import time
from datetime import datetime
from urllib.parse import urlsplit

DEADLINE = 180.0
CONNECT_BATCH = 50  # within the server's listen backlog
COMPLETED = b'"method":"validation.completed"'


@functools.cache
def timestamp(at: bytes) -> float:
    """An event's ``at`` in seconds; every subscriber here reads the same ones."""
    return datetime.fromisoformat(at.decode()).timestamp()


class Subscriber(asyncio.Protocol):
    def __init__(self, request: bytes, completions: int) -> None:
        self._request = request
        self._wanted = completions
        self._buffer = bytearray()
        self._in_body = False
        self.head: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.events = 0
        self.completions = 0
        self.delays: list[float] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(self._request)

    def data_received(self, data: bytes) -> None:
        arrived = time.time()
        self._buffer += data
        if not self._in_body:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if not self._buffer.startswith(b"HTTP/1.1 200"):
                self._fail(RuntimeError(bytes(self._buffer[:200]).decode(errors="replace")))
                return
            del self._buffer[: end + 4]
            self._in_body = True
            self.head.set_result(None)
        self._take_chunks(arrived)

    def _take_chunks(self, arrived: float) -> None:
        """Every whole chunk in the buffer (the server writes whole frames in each)."""
        buffer, start = self._buffer, 0
        while (line_end := buffer.find(b"\r\n", start)) >= 0:
            end = line_end + 2 + int(buffer[start:line_end], 16)
            if end + 2 > len(buffer):
                break
            self._take(line_end + 2, end, arrived)
            start = end + 2
        del buffer[:start]
        if self.completions >= self._wanted and not self.finished.done():
            self.finished.set_result(None)

    def _take(self, start: int, end: int, arrived: float) -> None:
        """The frames in ``buffer[start:end]``, read in place: each one's
        method and ``at``, where the server writes them (comments have none)."""
        buffer = self._buffer
        while (method := buffer.find(b'"method":"', start, end)) >= 0:
            at = buffer.find(b'"at":"', method, end) + 6
            close = buffer.index(b'"', at)
            self.delays.append((arrived - timestamp(bytes(buffer[at:close]))) * 1000)
            self.events += 1
            self.completions += buffer.startswith(COMPLETED, method)
            # The data line's end (JSON has no raw newline), then the frame's
            # blank line: one byte search, where one for "\n\n" scanned the
            # frame ~40x slower and made these processes the bottleneck.
            start = buffer.find(b"\n", close, end) + 2
            if start < 2:
                return

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(exc or ConnectionError("the server closed the stream"))

    def _fail(self, exc: Exception) -> None:
        for waiter in (self.head, self.finished):
            if not waiter.done():
                waiter.set_exception(exc)


async def main(url: str, token: str, count: int, completions: int) -> None:
    where = urlsplit(url)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    request = (
        f"GET /acp/v1/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    ).encode()
    loop = asyncio.get_running_loop()
    subscribers: list[Subscriber] = []
    transports: list[asyncio.BaseTransport] = []
    for first in range(0, count, CONNECT_BATCH):
        batch = [Subscriber(request, completions) for _ in range(min(CONNECT_BATCH, count - first))]
        opened = await asyncio.gather(
            *(loop.create_connection(lambda s=s: s, host, port) for s in batch)
        )
        transports += [transport for transport, _ in opened]
        await asyncio.gather(*(s.head for s in batch))
        subscribers += batch
    print("ready", flush=True)
    await asyncio.wait([s.finished for s in subscribers], timeout=DEADLINE)
    for transport in transports:
        transport.close()
    failures = [s.finished.exception() for s in subscribers if s.finished.done()]
    report = {
        "errors": [repr(exc) for exc in failures if exc is not None],
        "events": [s.events for s in subscribers],
        "completions": [s.completions for s in subscribers],
        "delays": [round(d, 2) for s in subscribers for d in s.delays],
    }
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    url, token, count, completions = sys.argv[1:5]
    asyncio.run(main(url, token, int(count), int(completions)))
