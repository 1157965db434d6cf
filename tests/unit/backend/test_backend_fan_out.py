"""The SSE fan-out over the real facade: each event encoded once for every
subscriber, a subscriber that reads nothing holding back no other and
catching up from the log, resumes, partial results, live subscribers
written through their sink, and closing (ADR 0028, 0035)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acp_backend import event_stream
from acp_backend.event_stream import KEEP_ALIVE, FanOut, sse_frames
from acp_backend.facade import BackendFacade
from acp_client.events import PlanApplied, ValidationResultEvent
from acp_client.models import Finding, Location, ValidationMode, ValidationResult
from tests.support.encodings import counting_encodings
from tests.support.waiting import until

Frames = AsyncIterator[bytes]
WAIT = 10.0


@pytest.fixture
def closing() -> asyncio.Event:
    return asyncio.Event()


@pytest.fixture
def fan_out(facade: BackendFacade, closing: asyncio.Event) -> FanOut:
    return FanOut(facade, closing)


@pytest.fixture
def encodings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The event id of every frame encoded, in order."""
    return counting_encodings(monkeypatch)


def publish(facade: BackendFacade, count: int) -> list[int]:
    return [
        facade.services.events.publish(
            PlanApplied, plan_id=f"P{n}", resource_id="R", paths=("a.py",)
        ).event_id
        for n in range(count)
    ]


async def subscribed(frames: Frames) -> Frames:
    assert await anext(frames) == b": connected\n\n"
    return frames


async def events(frames: Frames, count: int) -> list[dict[str, Any]]:
    """The next ``count`` event frames' notifications (keep-alives skipped)."""
    found: list[dict[str, Any]] = []
    async with asyncio.timeout(WAIT):
        while len(found) < count:
            for frame in (await anext(frames)).decode().split("\n\n"):
                if frame.startswith("id: "):
                    found.append(json.loads(frame.split("\ndata: ", 1)[1]))
    assert len(found) == count, "more events came than asked for"
    return found


def ids(notifications: list[dict[str, Any]]) -> list[int]:
    return [n["params"]["event_id"] for n in notifications]


async def test_each_event_is_encoded_once_for_every_subscriber(
    facade: BackendFacade, fan_out: FanOut, encodings: list[int]
) -> None:
    head = facade.services.events.last_id()
    streams = [await subscribed(sse_frames(fan_out, head, 15.0)) for _ in range(3)]
    published = publish(facade, 5)
    received = [await events(stream, 5) for stream in streams]
    assert [ids(got) for got in received] == [published] * 3
    assert encodings == published  # once each, whatever the number of subscribers
    for stream in streams:
        await stream.aclose()
    assert fan_out._live == {}  # the last one gone, the broadcast stops


async def test_a_subscriber_that_reads_nothing_holds_back_no_other_and_then_gets_everything(
    facade: BackendFacade,
    fan_out: FanOut,
    encodings: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(event_stream, "RING_FRAMES", 4)
    head = facade.services.events.last_id()
    stalled = await subscribed(sse_frames(fan_out, head, 15.0))
    reading = await subscribed(sse_frames(fan_out, head, 15.0))
    published = []
    for _ in range(12):  # three times what the ring holds
        published += publish(facade, 1)
        assert ids(await events(reading, 1)) == published[-1:]
    # Fallen behind the ring, it is served from the log, then from the ring again.
    assert ids(await events(stalled, 12)) == published
    assert len(encodings) > 12  # its catch-up encoded for it alone
    caught_up = len(encodings)
    later = publish(facade, 3)
    assert ids(await events(stalled, 3)) == ids(await events(reading, 3)) == later
    assert len(encodings) == caught_up + 3  # back on the ring: once each again
    for stream in (stalled, reading):
        await stream.aclose()


async def test_a_resume_from_before_the_broadcast_replays_the_log_without_gap_or_duplicate(
    facade: BackendFacade, fan_out: FanOut
) -> None:
    older = publish(facade, 6)
    live = await subscribed(sse_frames(fan_out, None, 15.0))  # from now: starts the broadcast
    newer = publish(facade, 2)
    assert ids(await events(live, 2)) == newer
    resumed = await subscribed(sse_frames(fan_out, older[1], 15.0))  # Last-Event-ID
    assert ids(await events(resumed, 6)) == older[2:] + newer
    latest = publish(facade, 2)
    assert ids(await events(resumed, 2)) == ids(await events(live, 2)) == latest
    for stream in (live, resumed):
        await stream.aclose()


async def test_a_resume_after_an_id_never_issued_starts_with_a_stream_reset(
    facade: BackendFacade, fan_out: FanOut
) -> None:
    head = publish(facade, 3)[-1]
    resumed = await subscribed(sse_frames(fan_out, head + 1000, 15.0))
    (reset,) = await events(resumed, 1)
    assert (reset["method"], reset["params"]["event_id"]) == ("stream.reset", head)
    later = publish(facade, 1)
    assert ids(await events(resumed, 1)) == later
    await resumed.aclose()


async def test_partial_results_go_to_those_who_asked_and_the_whole_to_the_others(
    facade: BackendFacade, fan_out: FanOut, tmp_path: Path
) -> None:
    (tmp_path / "p").mkdir()
    resource = await facade.dispatch("resource.register", {"path": str(tmp_path / "p")})
    findings = [
        Finding(location=Location(path=path, line=0, character=0), message=path)
        for path in ("a.py", "b.py")
    ]
    now = datetime.now(UTC)
    whole = ValidationResult(
        id="R1", validation="ruff", mode=ValidationMode.REQUIRED, passed=False,
        resource_id=resource["id"], run_id="run", started_at=now, finished_at=now,
        findings=findings,
    )  # fmt: skip
    facade.services.store.insert_result(whole)
    head = facade.services.events.last_id()
    streams = {
        partial: await subscribed(sse_frames(fan_out, head, 15.0, partial))
        for partial in (True, False)
    }
    facade.services.events.publish(
        ValidationResultEvent,
        result=whole.model_copy(update={"findings": whole.findings[:1]}),
        covered=("a.py",),
        base_result_id=whole.id,
    )
    (partial,) = await events(streams[True], 1)
    (entire,) = await events(streams[False], 1)
    assert partial["params"]["covered"] == ["a.py"]
    assert [f["message"] for f in partial["params"]["result"]["findings"]] == ["a.py"]
    assert "covered" not in entire["params"]
    assert [f["message"] for f in entire["params"]["result"]["findings"]] == ["a.py", "b.py"]
    for stream in streams.values():
        await stream.aclose()


class Sink:
    """A live subscriber's connection as the broadcast writes to it: the
    chunks it took, and whether it takes more (a full socket buffer does not)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.taking = True

    def __call__(self, chunk: bytes) -> bool:
        if self.taking:
            self.chunks.append(chunk)
        return self.taking

    def ids(self) -> list[int]:
        return frame_ids(b"".join(self.chunks))


def frame_ids(chunk: bytes) -> list[int]:
    frames = chunk.decode().split("\n\n")
    return [int(frame[4:].split("\n")[0]) for frame in frames if frame.startswith("id: ")]


async def test_a_live_subscriber_is_written_through_its_sink_and_its_task_takes_over_when_refused(
    facade: BackendFacade, fan_out: FanOut
) -> None:
    sink = Sink()
    stream = await subscribed(
        sse_frames(fan_out, facade.services.events.last_id(), 15.0, False, sink)
    )
    yielded = asyncio.ensure_future(anext(stream))  # waiting: live from here
    direct = publish(facade, 3)
    await until(lambda: sink.ids() == direct, WAIT, "the frames did not go through the sink")
    assert not yielded.done()  # none of them came the other way
    sink.taking = False  # its buffer is full: the task writes (and waits) instead
    refused = publish(facade, 2)
    async with asyncio.timeout(WAIT):
        taken = frame_ids(await yielded)
    taken += ids(await events(stream, len(refused) - len(taken)))
    assert taken == refused
    sink.taking = True  # drained: live again once its task has nothing to send
    yielded = asyncio.ensure_future(anext(stream))
    again = publish(facade, 2)
    await until(lambda: sink.ids() == direct + again, WAIT, "not live again")
    assert not yielded.done()
    yielded.cancel()  # the client goes: its stream ends where it waits
    await asyncio.gather(yielded, return_exceptions=True)
    await stream.aclose()
    assert fan_out._live == {}


async def test_a_quiet_stream_gets_keep_alives_and_a_busy_one_none(
    facade: BackendFacade, fan_out: FanOut
) -> None:
    stream = await subscribed(sse_frames(fan_out, facade.services.events.last_id(), 0.5))
    async with asyncio.timeout(WAIT):
        assert await anext(stream) == KEEP_ALIVE
    for _ in range(8):  # a frame every 0.05 s: never quiet for a whole interval
        publish(facade, 1)
        async with asyncio.timeout(WAIT):
            assert (await anext(stream)).startswith(b"id: ")
        await asyncio.sleep(0.05)
    await stream.aclose()


async def test_closing_ends_every_stream_and_its_broadcast(
    facade: BackendFacade, fan_out: FanOut, closing: asyncio.Event
) -> None:
    head = facade.services.events.last_id()
    sinks = [Sink() for _ in range(4)]
    streams = [
        await subscribed(sse_frames(fan_out, head, 15.0, n % 2 == 0, sinks[n] if n < 2 else None))
        for n in range(4)
    ]  # live ones and others, of both kinds
    publish(facade, 1)
    readers = [asyncio.create_task(drain(stream)) for stream in streams]
    await asyncio.sleep(0.1)
    closing.set()
    async with asyncio.timeout(WAIT):
        await asyncio.gather(*readers)
    assert fan_out._live == {}


async def drain(stream: Frames) -> None:
    async for _ in stream:
        pass
