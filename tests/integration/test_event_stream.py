"""The SSE event stream across outages: cut connections, a restarted server,
a silent dead path, retention resets, a server that replays too much."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer, http_response

from acp_client import events
from acp_client.client import AcpClient
from acp_client.errors import AuthenticationError, StreamDropped
from acp_client.events import Event, ResourceChanged, StreamReset
from acp_client.transport.http import HttpTransport
from acp_client.transport.inprocess import InProcessTransport
from acp_client.transport.policy import StreamPolicy
from acp_client.transport.sse import SseSubscription
from tests.support.waiting import until

WAIT = 20.0  # generous: a loaded 2-core machine
FAST = StreamPolicy(backoff_initial=0.05, backoff_max=0.2, max_attempts=None)


class Collector:
    """Consumes an event iterator in a task, so a test can act meanwhile."""

    def __init__(self, events: AsyncIterator[Any]) -> None:
        self.items: list[Any] = []
        self.error: BaseException | None = None
        self._task = asyncio.create_task(self._run(events))

    async def _run(self, events: AsyncIterator[Any]) -> None:
        try:
            async for item in events:
                self.items.append(item)
        except Exception as exc:
            self.error = exc

    async def wait_for(self, count: int) -> list[Any]:
        await until(lambda: len(self.items) >= count or self.error is not None, WAIT)
        assert self.error is None, self.error
        return self.items

    async def aclose(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def ids(items: list[Event | dict[str, Any]]) -> list[int]:
    """Event ids, of typed events and of notifications this client cannot type."""
    return [
        item.event_id if isinstance(item, Event) else item["params"]["event_id"] for item in items
    ]


async def register(client: AcpClient, root: Path, *names: str) -> None:
    for name in names:
        (root / name).mkdir(parents=True)
        await client.resource_register(str(root / name))


@pytest.fixture
async def writer(live_server: LiveServer) -> AsyncIterator[AcpClient]:
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        yield client


async def test_a_killed_connection_resumes_without_loss_or_duplicates(
    live_server: LiveServer, writer: AcpClient, proxy_to: Any, tmp_path: Path
) -> None:
    proxy = await proxy_to(live_server)
    reader = HttpTransport(proxy.url, token=live_server.token, stream_policy=FAST)
    subscription = reader.subscription(after=0)
    collector = Collector(aiter(subscription))
    await register(writer, tmp_path, "a", "b")
    first = ids(await collector.wait_for(2))
    proxy.kill()
    await register(writer, tmp_path, "c", "d")
    await collector.wait_for(4)
    await register(writer, tmp_path, "e")
    received = ids(await collector.wait_for(5))
    await asyncio.sleep(0.3)  # room for a late duplicate to show up
    assert received == ids(collector.items) == list(range(first[0], first[0] + 5))
    assert subscription.connections >= 2
    assert proxy.accepted >= 2
    await collector.aclose()
    await reader.aclose()


async def test_a_stream_builds_its_event_reader_as_it_connects(live_server: LiveServer) -> None:
    # ~2 ms of pydantic work, taken while the stream is quiet rather than
    # on the way of its first event.
    events._notifications.cache_clear()
    reader = HttpTransport(live_server.url, token=live_server.token)
    collector = Collector(aiter(reader.subscription(after=None)))
    await until(lambda: events._notifications.cache_info().currsize == 1, WAIT)
    assert collector.items == [] and collector.error is None
    await collector.aclose()
    await reader.aclose()


async def test_a_server_side_close_resumes_after_a_restart_without_loss(
    live_server: LiveServer, tmp_path: Path
) -> None:
    reader = HttpTransport(live_server.url, token=live_server.token, stream_policy=FAST)
    collector = Collector(reader.events(after=0))
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        await register(client, tmp_path, "a", "b")
        await collector.wait_for(2)
    live_server.stop()  # ends the stream from the server's side
    # While the server is down, another process on the data dir goes on.
    async with AcpClient(InProcessTransport.load(data_dir=live_server.data_dir)) as local:
        await register(local, tmp_path, "c", "d")
    live_server.start()
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        await register(client, tmp_path, "e")
        received = await collector.wait_for(5)
    await asyncio.sleep(0.3)
    names = [event.resource.name for event in received if isinstance(event, ResourceChanged)]
    assert names == ["a", "b", "c", "d", "e"]
    assert ids(collector.items) == sorted(set(ids(collector.items)))
    await collector.aclose()
    await reader.aclose()


async def test_a_silent_dead_stream_is_noticed_by_the_watchdog(
    make_server: Any, proxy_to: Any, tmp_path: Path
) -> None:
    server: LiveServer = make_server(keepalive=0.2)
    proxy = await proxy_to(server)
    policy = StreamPolicy(
        keepalive_interval=0.5, silence_factor=3, backoff_initial=0.05, max_attempts=None
    )
    reader = HttpTransport(proxy.url, token=server.token, stream_policy=policy)
    subscription = reader.subscription(after=0)
    collector = Collector(aiter(subscription))
    async with AcpClient(HttpTransport(server.url, token=server.token)) as client:
        await register(client, tmp_path, "a")
        await collector.wait_for(1)
        # Keep-alive comments alone keep a quiet stream trusted...
        await asyncio.sleep(policy.silence_timeout * 1.5)
        assert subscription.connections == 1
        # ...until the path goes dead without closing: nothing at all arrives.
        proxy.freeze()
        frozen_at = time.monotonic()
        await register(client, tmp_path, "b")
        await collector.wait_for(2)
    noticed_after = time.monotonic() - frozen_at
    assert subscription.connections == 2
    assert policy.silence_timeout * 0.9 <= noticed_after < WAIT
    assert ids(collector.items) == [ids(collector.items)[0], ids(collector.items)[0] + 1]
    await collector.aclose()
    await reader.aclose()


async def test_a_resume_point_older_than_retention_gets_a_stream_reset(
    make_server: Any, tmp_path: Path
) -> None:
    server: LiveServer = make_server(retention=2)
    async with AcpClient(HttpTransport(server.url, token=server.token)) as client:
        await register(client, tmp_path, "a", "b", "c", "d", "e")
        collector = Collector(client.events(after=1))
        received = await collector.wait_for(3)
        await collector.aclose()
    reset, *rest = received
    assert isinstance(reset, StreamReset)
    assert reset.oldest_event_id == 4
    assert reset.event_id == 3
    assert [(type(event), event.event_id) for event in rest] == [
        (ResourceChanged, 4),
        (ResourceChanged, 5),
    ]


async def test_a_stream_gives_up_after_the_configured_attempts(
    live_server: LiveServer, writer: AcpClient, tmp_path: Path
) -> None:
    policy = StreamPolicy(backoff_initial=0.05, backoff_max=0.1, max_attempts=3)
    reader = HttpTransport(live_server.url, token=live_server.token, stream_policy=policy)
    subscription = reader.subscription(after=0)
    collector = Collector(aiter(subscription))
    await register(writer, tmp_path, "a")
    await collector.wait_for(1)  # a connection that delivers is healthy: it does not count
    live_server.stop()
    await until(lambda: collector.error is not None, WAIT)
    assert isinstance(collector.error, StreamDropped)
    assert "after 3 attempts" in str(collector.error)
    assert subscription.connections == 4  # the healthy one, then three failed
    await reader.aclose()


async def test_a_wrong_token_on_the_stream_fails_at_once(live_server: LiveServer) -> None:
    reader = HttpTransport(live_server.url, token="wrong", stream_policy=FAST)
    with pytest.raises(AuthenticationError):
        async for _ in reader.events():
            pass
    await reader.aclose()


def sse_body(*frames: str) -> bytes:
    return "".join(frame + "\n\n" for frame in frames).encode()


def notification(event_id: int) -> str:
    return (
        f'id: {event_id}\ndata: {{"jsonrpc": "2.0", "method": "x.y", '
        f'"params": {{"event_id": {event_id}}}}}'
    )


async def test_events_a_server_replays_are_delivered_once(canned: Any) -> None:
    # This peer ignores Last-Event-ID: every connection replays 1..3 and ends.
    body = sse_body(
        notification(1),
        notification(2),
        ": a comment",
        "data: not json at all",
        notification(2),
        notification(3),
    )
    peer = await canned(http_response(200, body, "text/event-stream"))
    policy = StreamPolicy(backoff_initial=0.01, backoff_max=0.02, max_attempts=3)
    reader = HttpTransport(peer.url, token="t", stream_policy=policy)
    subscription = SseSubscription(reader._http, peer.url, "peer", policy, after=None)
    collector = Collector(aiter(subscription))
    await until(lambda: collector.error is not None, WAIT)
    assert isinstance(collector.error, StreamDropped)
    assert ids(collector.items) == [1, 2, 3]
    assert subscription.connections == 4  # one that delivered, three that did not
    await reader.aclose()


async def test_a_non_event_stream_answer_counts_as_a_failed_attempt(canned: Any) -> None:
    peer = await canned(http_response(200, b'{"not": "sse"}'))
    policy = StreamPolicy(backoff_initial=0.01, backoff_max=0.02, max_attempts=2)
    reader = HttpTransport(peer.url, token="t", stream_policy=policy)
    with pytest.raises(StreamDropped, match="after 2 attempts"):
        async for _ in reader.events(after=0):
            pass
    await reader.aclose()


async def test_a_stream_without_a_position_gives_up_at_its_first_loss(
    live_server: LiveServer, writer: AcpClient, proxy_to: Any, tmp_path: Path
) -> None:
    proxy = await proxy_to(live_server)
    reader = HttpTransport(proxy.url, token=live_server.token, stream_policy=FAST)
    subscription = reader.subscription(after=None)
    collector = Collector(aiter(subscription))
    await until(lambda: proxy.links, WAIT)
    proxy.kill()
    await register(writer, tmp_path, "missed")  # resuming "from now" would skip this
    await until(lambda: collector.error is not None, WAIT)
    assert isinstance(collector.error, StreamDropped)
    assert "no position to resume from" in str(collector.error)
    assert subscription.connections == 1
    await reader.aclose()
