"""The SSE fan-out over real HTTP: subscribers that keep up are written
straight through their connections; a subscriber that stops reading holds
back no other and later gets every event; a resume inside what the server
holds in memory is exact (ADR 0028, 0035)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer

from acp_backend import event_stream, store
from acp_backend.http_guard import ChunkWriter
from acp_client.client import AcpClient
from acp_client.events import Event, ValidationCompleted, ValidationResultEvent
from acp_client.transport.http import HttpTransport
from tests.support.chunked import dechunked
from tests.support.encodings import counting_encodings
from tests.support.waiting import until

WAIT = 20.0  # generous: a loaded 2-core machine
FINDINGS = 10_000  # ~1 MB a result event
RUNS = 10  # ~8 MB: more than a stalled reader's buffers take (~3 MB on loopback, and uvicorn's)
EMIT = f'print("\\n".join(f"a.py:{{i % 9 + 1}}:1: finding {{i}}" for i in range({FINDINGS})))'
TOML = f"""\
[[validations]]
name = "many"
mode = "required"
format = "pattern"
command = [{json.dumps(sys.executable)}, "-c", {json.dumps(EMIT)}]
"""


class StalledReader:
    """``GET /acp/v1/events`` on a plain socket with a tiny receive buffer,
    not read until ``read_ids``: the server's writes to it soon block."""

    def __init__(self, server: LiveServer, after: int) -> None:
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self._sock.connect(("127.0.0.1", server.port))
        self._sock.sendall(
            f"GET /acp/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}"
            f"\r\nLast-Event-ID: {after}\r\n\r\n".encode()
        )

    async def read_ids(self, last: int) -> list[int]:
        """The event ids of every frame up to the one with id ``last``."""
        self._sock.setblocking(False)
        loop = asyncio.get_running_loop()
        received = bytearray()
        async with asyncio.timeout(WAIT):
            while f"\nid: {last}\n".encode() not in received[-(1 << 20) :]:
                received += await loop.sock_recv(self._sock, 1 << 20)
        self._sock.close()
        body = dechunked(bytes(received).split(b"\r\n\r\n", 1)[1]).decode()
        return [
            int(frame[4:].split("\n")[0]) for frame in body.split("\n\n") if frame[:4] == "id: "
        ]


async def register(client: AcpClient, path: Path) -> str:
    return (await client.resource_register(made(path))).id


def many_findings_project(tmp_path: Path) -> Path:
    """A project whose one validation reports ``FINDINGS`` findings about a.py."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "acp.toml").write_text(TOML, encoding="utf-8")
    (root / "a.py").write_text("x = 1\n" * 9, encoding="utf-8")
    return root


def made(path: Path) -> str:
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def completions(events: list[Event]) -> int:
    return sum(isinstance(event, ValidationCompleted) for event in events)


async def collected(events: AsyncIterator[Event | dict[str, Any]], into: list[Event]) -> None:
    async for event in events:
        assert isinstance(event, Event)
        into.append(event)


def ids(events: list[Event]) -> list[int]:
    return [event.event_id for event in events]


def direct_frames(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """Frames written through each connection's ``ChunkWriter``, by writer."""
    frames: Counter[int] = Counter()
    write = ChunkWriter.__call__

    def counted(writer: ChunkWriter, chunk: bytes) -> bool:
        written = write(writer, chunk)
        frames[id(writer)] += chunk.count(b"\n\n") if written else 0
        return written

    monkeypatch.setattr(ChunkWriter, "__call__", counted)
    return frames


async def test_readers_that_keep_up_are_written_straight_through_their_connections(
    live_server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    direct = direct_frames(monkeypatch)
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        head = await client.last_event_id() or 0
        reader = HttpTransport(live_server.url, token=live_server.token)
        received: list[list[Event]] = [[], [], []]
        following = [asyncio.create_task(collected(reader.events(after=head), r)) for r in received]
        await register(client, tmp_path / "r0")
        await until(lambda: all(len(r) == 1 for r in received), WAIT)  # each one live
        for n in range(1, 6):
            await register(client, tmp_path / f"r{n}")
        await until(lambda: all(len(r) == 6 for r in received), WAIT)
        await asyncio.sleep(0.2)  # room for a duplicate to show up
        for task in following:
            task.cancel()
        await asyncio.gather(*following, return_exceptions=True)
        await reader.aclose()
    assert [ids(r) for r in received] == [list(range(head + 1, head + 7))] * 3
    assert sorted(direct.values()) == [5, 5, 5]  # each event after the first, to each reader


async def test_a_result_event_carries_the_json_the_store_wrote(
    live_server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its findings are not written to JSON a second time on the server's
    loop: the store's text is marked here, and the event carries the mark."""
    write = store.result_body
    monkeypatch.setattr(
        store,
        "result_body",
        lambda result: write(result).replace('"validation":"many"', '"validation":"stored"', 1),
    )
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        resource = await register(client, many_findings_project(tmp_path))
        head = await client.last_event_id() or 0
        reader = HttpTransport(live_server.url, token=live_server.token)
        received: list[Event] = []
        following = asyncio.create_task(collected(reader.events(after=head), received))
        try:
            await client.validation_run(resource)
            await until(lambda: completions(received) == 1, WAIT)
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await reader.aclose()
    (sent,) = [event for event in received if isinstance(event, ValidationResultEvent)]
    assert sent.result.validation == "stored"
    assert len(sent.result.findings) == FINDINGS


async def test_a_reader_that_stops_reading_holds_back_no_other_and_then_gets_every_event(
    live_server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_stream, "RING_BYTES", 1 << 20)  # about one result event
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        resource = await register(client, many_findings_project(tmp_path))
        head = await client.last_event_id() or 0
        stalled = StalledReader(live_server, head)
        encoded = counting_encodings(monkeypatch)
        reader = HttpTransport(live_server.url, token=live_server.token)
        fast: list[Event] = []
        following = asyncio.create_task(collected(reader.events(after=head), fast))
        try:
            for run in range(RUNS):
                await client.validation_run(resource)
                # The run's events reach the reading subscriber while the other reads nothing.
                await until(lambda run=run: completions(fast) > run, WAIT, f"run {run + 1} lost")
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await reader.aclose()
        expected = list(range(head + 1, head + 3 * RUNS + 1))  # started, result, completed
        assert ids(fast) == expected
        assert await stalled.read_ids(expected[-1]) == expected
    assert len(encoded) > len(expected)  # it had fallen behind: its catch-up encoded again


async def test_a_resume_from_what_the_server_holds_is_exact_and_encodes_nothing_again(
    live_server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        head = await client.last_event_id() or 0
        reader = HttpTransport(live_server.url, token=live_server.token)
        live: list[Event] = []
        following = asyncio.create_task(collected(reader.events(after=head), live))
        await register(client, tmp_path / "r0")
        await until(lambda: len(live) == 1, WAIT)  # connected: what follows is held
        encoded = counting_encodings(monkeypatch)
        for n in range(1, 6):
            await register(client, tmp_path / f"r{n}")
        await until(lambda: len(live) == 6, WAIT)
        resumed: list[Event] = []
        after = live[2].event_id
        resuming = asyncio.create_task(collected(reader.events(after=after), resumed))
        await register(client, tmp_path / "r6")
        await until(lambda: len(resumed) == 4 and len(live) == 7, WAIT)
        await asyncio.sleep(0.2)  # room for a duplicate to show up
        for task in (following, resuming):
            task.cancel()
        await asyncio.gather(following, resuming, return_exceptions=True)
        await reader.aclose()
    assert ids(resumed) == ids(live)[3:] == list(range(head + 4, head + 8))
    assert encoded == ids(live)[1:]  # the resume came from the frames already encoded
