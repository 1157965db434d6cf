"""The event log: ids, retention, replay with stream.reset, live and cross-process delivery."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from acp_backend.eventlog import EventLog
from acp_backend.facade import BackendFacade
from acp_backend.store import Store
from acp_client.events import PlanApplied, ResourceChanged, StreamReset, parse_event
from acp_client.models import Resource

Notification = dict[str, Any]


def publish_applied(events: EventLog, n: int) -> list[int]:
    return [
        events.publish(PlanApplied, plan_id=f"P{i}", resource_id="R", paths=("a.py",)).event_id
        for i in range(n)
    ]


async def take(stream: AsyncIterator[Notification], n: int, within: float = 5.0) -> list[Any]:
    async with asyncio.timeout(within):
        return [parse_event(await anext(stream)) for _ in range(n)]


def test_publish_assigns_increasing_ids_and_returns_the_typed_event(events: EventLog) -> None:
    resource = Resource(id="R", name="r", root="/r", created_at=datetime.now(UTC))
    first = events.publish(ResourceChanged, change="registered", resource=resource)
    second = events.publish(ResourceChanged, change="updated", resource=resource)
    assert isinstance(first, ResourceChanged)
    assert (first.event_id, second.event_id) == (1, 2)
    assert first.at <= second.at
    assert events.last_id() == 2


def test_a_malformed_event_is_refused_before_it_is_written(events: EventLog) -> None:
    with pytest.raises(ValidationError):
        events.publish(PlanApplied, plan_id="P")  # no resource_id, no paths
    assert events.last_id() == 0


def test_retention_keeps_the_newest_events(store: Store) -> None:
    events = EventLog(store, retention=5)
    publish_applied(events, 12)
    ids = [row["id"] for row in store.query("SELECT id FROM events ORDER BY id")]
    assert ids == [8, 9, 10, 11, 12]
    assert (events.oldest_id(), events.last_id()) == (8, 12)


async def test_replay_is_in_order_then_live(events: EventLog) -> None:
    publish_applied(events, 3)
    stream = events.subscribe(after=1)
    replayed = await take(stream, 2)
    assert [e.event_id for e in replayed] == [2, 3]
    publish_applied(events, 1)
    (live,) = await take(stream, 1)
    assert live.event_id == 4
    await stream.aclose()


async def test_replay_larger_than_a_batch_loses_nothing(store: Store) -> None:
    events = EventLog(store, retention=5000)
    publish_applied(events, 1234)
    stream = events.subscribe(after=0)
    received = await take(stream, 1234)
    assert [e.event_id for e in received] == list(range(1, 1235))
    await stream.aclose()


async def test_an_id_older_than_retention_gets_a_stream_reset_first(store: Store) -> None:
    events = EventLog(store, retention=5)
    publish_applied(events, 12)  # keeps 8..12
    stream = events.subscribe(after=3)
    reset, *rest = await take(stream, 6)
    assert isinstance(reset, StreamReset)
    assert (reset.event_id, reset.oldest_event_id) == (7, 8)
    assert [e.event_id for e in rest] == [8, 9, 10, 11, 12]
    await stream.aclose()


async def test_a_consumer_overtaken_by_retention_gets_a_stream_reset(
    store: Store, data_dir: Path
) -> None:
    """Events another process wrote are read back from the log: those
    retention deleted first are lost, and the consumer is told."""
    events = EventLog(store, retention=5)
    elsewhere = Store(data_dir)
    other = EventLog(elsewhere, retention=5)
    try:
        publish_applied(other, 3)
        stream = events.subscribe(after=0)
        assert [e.event_id for e in await take(stream, 2)] == [1, 2]
        publish_applied(other, 10)  # 4..8 are deleted before the consumer asks again
        three, reset, *rest = await take(stream, 7)
    finally:
        elsewhere.close()
    assert three.event_id == 3  # already read from the table before the deletion
    assert isinstance(reset, StreamReset)
    assert (reset.event_id, reset.oldest_event_id) == (8, 9)
    assert [e.event_id for e in rest] == [9, 10, 11, 12, 13]
    await stream.aclose()


async def test_a_slow_consumer_still_gets_this_process_events_while_they_are_held(
    store: Store,
) -> None:
    """What this process published is handed over from memory (up to the
    last 256): retention deleting it from the log loses nothing."""
    events = EventLog(store, retention=5)
    stream = events.subscribe()
    first = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    publish_applied(events, 13)  # 1..8 are deleted from the log meanwhile
    assert parse_event(await asyncio.wait_for(first, 5)).event_id == 1
    rest = await take(stream, 12)
    assert [e.event_id for e in rest] == list(range(2, 14))
    await stream.aclose()


async def test_no_reset_when_nothing_was_lost(store: Store) -> None:
    events = EventLog(store, retention=5)
    publish_applied(events, 12)
    stream = events.subscribe(after=7)  # 8 is the oldest kept: nothing missing
    received = await take(stream, 5)
    assert [e.event_id for e in received] == [8, 9, 10, 11, 12]
    await stream.aclose()


async def test_an_id_this_log_never_issued_gets_a_stream_reset(events: EventLog) -> None:
    publish_applied(events, 2)
    stream = events.subscribe(after=99)  # e.g. the data dir was wiped
    reset = (await take(stream, 1))[0]
    assert isinstance(reset, StreamReset) and reset.event_id == 2
    publish_applied(events, 1)
    assert [e.event_id for e in await take(stream, 1)] == [3]
    await stream.aclose()


async def test_subscribing_without_an_id_starts_from_now(events: EventLog) -> None:
    publish_applied(events, 2)
    stream = events.subscribe()
    pending = asyncio.ensure_future(take(stream, 1))
    await asyncio.sleep(0.1)
    publish_applied(events, 1)
    assert [e.event_id for e in await pending] == [3]
    await stream.aclose()


async def test_in_process_subscribers_are_woken_at_once(store: Store) -> None:
    events = EventLog(store, poll_interval=60)  # polling alone would take a minute
    streams = [events.subscribe(), events.subscribe()]
    pending = [asyncio.ensure_future(take(s, 1, within=2)) for s in streams]
    await asyncio.sleep(0.05)
    started = time.monotonic()
    publish_applied(events, 1)
    results = await asyncio.gather(*pending)
    assert time.monotonic() - started < 0.5
    assert [r[0].event_id for r in results] == [1, 1]
    for stream in streams:
        await stream.aclose()


async def test_an_event_published_from_another_thread_wakes_subscribers(store: Store) -> None:
    events = EventLog(store, poll_interval=60)
    stream = events.subscribe()
    pending = asyncio.ensure_future(take(stream, 1, within=2))
    await asyncio.sleep(0.05)
    thread = threading.Thread(target=publish_applied, args=(events, 1))
    thread.start()
    thread.join()
    assert [e.event_id for e in await pending] == [1]
    await stream.aclose()


async def test_close_ends_every_subscription(events: EventLog) -> None:
    stream = events.subscribe()
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    events.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(pending, 2)


async def test_events_written_by_another_process_are_delivered(
    facade: BackendFacade, data_dir: Path, tmp_path: Path
) -> None:
    """A CLI command in a terminal shows up in an editor's server."""
    project = tmp_path / "from-the-terminal"
    project.mkdir()
    stream = facade.subscribe()
    pending = asyncio.ensure_future(take(stream, 1, within=15))
    await asyncio.sleep(0.05)
    cli = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acp_backend.cli",
        "--data-dir",
        str(data_dir),
        "resource",
        "add",
        str(project),
    )
    assert await cli.wait() == 0
    (event,) = await pending
    assert isinstance(event, ResourceChanged)
    assert (event.change, event.resource.root) == ("registered", str(project))
    await stream.aclose()


async def test_own_events_reach_a_subscriber_without_a_query_in_order_with_others(
    store: Store, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process's events are handed to its subscribers as published
    (a save's result reached the editor one SQLite query sooner); another
    connection's (another process's) are read from the log, in id order."""
    events = EventLog(store, poll_interval=60)
    stream = events.events()
    first = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    queries: list[str] = []
    real_query = store.query
    monkeypatch.setattr(store, "query", lambda sql, *a: queries.append(sql) or real_query(sql, *a))
    publish_applied(events, 3)
    async with asyncio.timeout(5):
        own = [await first, await anext(stream), await anext(stream)]
    assert [e.event_id for e in own] == [1, 2, 3]
    assert not [sql for sql in queries if "FROM events" in sql and "WHERE id >" in sql]

    elsewhere = Store(data_dir)
    try:
        publish_applied(EventLog(elsewhere), 1)  # id 4, as another process writes it
    finally:
        elsewhere.close()
    publish_applied(events, 1)  # id 5: handed over, but not before 4
    async with asyncio.timeout(5):
        rest = [await anext(stream), await anext(stream)]
    assert [(e.event_id, e.plan_id) for e in rest] == [(4, "P0"), (5, "P0")]
    await stream.aclose()
