"""The wake-up channel: another process's event arrives at once, polling where
there is no channel, sockets of dead processes removed, long data-dir paths."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sqlite3
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from acp_backend.eventlog import EventLog
from acp_backend.store import Store
from acp_backend.wakeup import SOCKET_PATH_MAX, WakeChannel, wake_address

pytestmark = pytest.mark.skipif(os.name != "posix", reason="Unix sockets")

# A second process on the same data dir, as a CLI in a terminal would be.
WRITER = """
import sys
from pathlib import Path
from acp_backend.eventlog import EventLog
from acp_backend.store import Store
from acp_client.events import PlanApplied
store = Store(Path(sys.argv[1]))
EventLog(store).publish(PlanApplied, plan_id="P", resource_id="R", paths=("a.py",))
store.close()
"""


async def write_from_another_process(data_dir: Path) -> None:
    writer = await asyncio.create_subprocess_exec(sys.executable, "-c", WRITER, str(data_dir))
    assert await writer.wait() == 0


async def first_event_written_elsewhere(events: EventLog, data_dir: Path) -> int:
    """The id of the first event another process writes, as ``events`` delivers it."""
    stream = events.events()
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)  # subscribed and waiting
    await write_from_another_process(data_dir)
    try:
        async with asyncio.timeout(15):
            return (await pending).event_id
    finally:
        await stream.aclose()


def sockets(directory: Path, prefix: str = "") -> list[str]:
    """The names of the sockets in ``directory`` beginning with ``prefix``, without it."""
    found = directory.glob(f"{prefix}*.sock") if directory.is_dir() else ()
    return sorted(p.name.removeprefix(prefix) for p in found)


def sockets_of(data_dir: Path) -> list[str]:
    address = wake_address(data_dir)
    assert address is not None
    return sockets(*address)


@pytest.fixture
def long_data_dir(tmp_path: Path) -> Path:
    """A data dir whose own wake directory could not hold a socket path."""
    return tmp_path / ("d" * (SOCKET_PATH_MAX - len(os.fsencode(tmp_path)))) / "data"


@pytest.mark.parametrize("where", ["short", "long"])
async def test_an_event_written_by_another_process_wakes_a_subscriber_at_once(
    where: str, data_dir: Path, long_data_dir: Path
) -> None:
    data_dir = long_data_dir if where == "long" else data_dir
    store = Store(data_dir)
    # Polling and re-checking alone would take a minute: only a wake-up is in time.
    events = EventLog(store, poll_interval=60, recheck_interval=60)
    try:
        assert await first_event_written_elsewhere(events, data_dir) == 1
    finally:
        events.close()
        store.close()
    assert sockets_of(data_dir) == []


def test_a_long_data_dir_names_its_sockets_in_a_directory_in_the_temp_dir(
    long_data_dir: Path,
) -> None:
    address = wake_address(long_data_dir)
    assert address is not None
    directory, prefix = address
    assert directory == Path(tempfile.gettempdir()) / f"acp-wake-{os.getuid()}"
    assert len(os.fsencode(directory / f"{prefix}{4 * 10**6}-01234567.sock")) <= SOCKET_PATH_MAX
    assert wake_address(long_data_dir / ".." / "data") == address  # however it is spelt
    other = wake_address(long_data_dir.parent / "other")
    assert other is not None and other[0] == directory and other[1] != prefix


def test_no_wake_directory_when_no_path_is_short_enough(
    long_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(long_data_dir))
    assert wake_address(long_data_dir) is None


@pytest.mark.parametrize("channel", ["none on this platform", "cannot bind"])
async def test_without_a_channel_events_of_other_processes_are_polled(
    channel: str, data_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shared = tmp_path / "shared"  # not this user's alone: refused
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    store = Store(data_dir)
    wakeups = WakeChannel(None if channel == "none on this platform" else shared)
    events = EventLog(store, poll_interval=0.05, recheck_interval=60, wakeups=wakeups)
    try:
        with caplog.at_level(logging.INFO, logger="acp_backend.wakeup"):
            assert await first_event_written_elsewhere(events, data_dir) == 1
        assert "events of other processes are polled" in caplog.text
        assert sockets(shared) == []
    finally:
        events.close()
        store.close()


async def test_a_process_listens_only_while_it_has_subscribers(store: Store) -> None:
    events = EventLog(store)
    assert sockets_of(store.data_dir) == []
    first, second = events.events(), events.events()
    pending = [asyncio.ensure_future(anext(s)) for s in (first, second)]
    await asyncio.sleep(0.05)
    (name,) = sockets_of(store.data_dir)  # one socket however many subscribers
    assert name.startswith(f"{os.getpid()}-")
    for stream, waiting in zip((first, second), pending, strict=True):
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await stream.aclose()
    assert sockets_of(store.data_dir) == []


async def test_close_removes_the_socket(store: Store) -> None:
    events = EventLog(store)
    stream = events.events()
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    assert sockets_of(store.data_dir)
    events.close()
    assert sockets_of(store.data_dir) == []
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(pending, 2)


async def test_an_idle_subscriber_does_not_poll(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    looks = 0
    query = store.query

    def counted(sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        nonlocal looks
        looks += 1
        return query(sql, params)

    events = EventLog(store, poll_interval=0.01)  # the channel makes it irrelevant
    stream = events.events()
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    monkeypatch.setattr(store, "query", counted)
    await asyncio.sleep(0.5)
    assert looks == 0
    pending.cancel()
    await asyncio.gather(pending, return_exceptions=True)
    await stream.aclose()


def test_a_socket_left_by_a_dead_process_is_removed_by_the_next_notify(tmp_path: Path) -> None:
    directory = tmp_path / "wake"
    directory.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as dead:
        dead.bind(str(directory / "4242-deadbeef.sock"))  # closed: its file stays
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as alive:
        alive.bind(str(directory / "4343-cafecafe.sock"))
        alive.setblocking(False)
        WakeChannel(directory).notify()
        assert alive.recv(1) == b"\0"
    assert sockets(directory) == ["4343-cafecafe.sock"]


def test_notify_without_listeners_does_nothing(tmp_path: Path) -> None:
    WakeChannel(tmp_path / "never-listened").notify()
    assert not (tmp_path / "never-listened").exists()


def test_a_writer_wakes_only_the_sockets_of_its_own_data_dir(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o700)
    with (
        socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as ours,
        socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as theirs,
    ):
        ours.bind(str(shared / "0123456789ab-1-00000000.sock"))
        theirs.bind(str(shared / "ba9876543210-1-00000000.sock"))
        theirs.setblocking(False)
        WakeChannel(shared, "0123456789ab-").notify()
        assert ours.recv(1) == b"\0"
        with pytest.raises(BlockingIOError):
            theirs.recv(1)
