"""The SSE side of the HTTP server: the facade's events as SSE frames.

Each event is ``id: <event_id>`` plus ``data: <JSON-RPC notification>``, so
a client's ``Last-Event-ID`` resumes right after it; a comment line goes out
whenever nothing else did for a keep-alive interval, which is what lets a
client tell a quiet stream from a dead one.

Every client of one kind of stream (whole or partial results) reads one
``Broadcast``: a single facade subscription whose frames are encoded once
and kept in a bounded ``Ring``, which each client reads from its own
position. The broadcast never waits for a client, so a slow one holds back
no other; a client whose position the ring does not hold (an older
``Last-Event-ID``, or it fell that far behind) is served from the log by a
subscription of its own until the ring holds its position again (ADR 0028).

A client that has been sent every frame the ring holds, and whose server
gave it a ``ChunkSink``, waits as *live*: where another client's task would
be woken, the broadcast writes the new frames to it straight through the
sink, and hands it back to its own task (which writes through ASGI ``send``
and so waits for a slow peer) only when the sink refuses them (ADR 0036).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from acp_client.events import Event, ValidationResultEvent
from acp_client.models import ValidationResult
from acp_client.transport import Facade, subscribe

log = logging.getLogger(__name__)

RING_FRAMES = 1024
RING_BYTES = 16 << 20  # the newest frame is kept whatever its size
CATCH_UP_BUFFER = 256  # frames a catching-up client's subscription reads ahead of it
WAKE_SLICE = 32  # clients woken per turn of the loop: requests are read between slices
PUSH_SLICE = 0.003  # seconds of writes to live clients per turn of the loop, likewise
WRITE_BYTES = 256 << 10  # frames are joined into one write until it has this many bytes
CONNECTED = b": connected\n\n"
KEEP_ALIVE = b": keep-alive\n\n"

Message = dict[str, Any] | Event
ChunkSink = Callable[[bytes], bool]
"""Writes a chunk of a client's stream now, or says False and writes nothing."""
Push = Callable[[], bool]
"""Writes the frames a live client has not had, or says False and writes nothing."""
StoredJson = Callable[[ValidationResult], str | None]
"""A result's JSON as its backend stored it, if it still has it at hand."""


def nothing_stored(_: ValidationResult) -> str | None:
    """A backend that keeps no result's JSON at hand."""
    return None


class Ring:
    """Frames by sequence number, the oldest dropped past ``RING_FRAMES`` or
    ``RING_BYTES``. It holds every frame after event id ``floor`` up to
    ``head``, the newest frame's id (or ``floor`` while it holds none)."""

    def __init__(self, floor: int) -> None:
        self.floor = self.head = floor
        self.first = self.end = 0  # sequence numbers of the oldest frame held and the next
        self._frames: dict[int, tuple[int, bytes]] = {}
        self._bytes = 0

    def append(self, event_id: int, frame: bytes) -> None:
        self._frames[self.end] = (event_id, frame)
        self.end += 1
        self.head = event_id
        self._bytes += len(frame)
        while self.end - self.first > 1 and (
            self.end - self.first > RING_FRAMES or self._bytes > RING_BYTES
        ):
            self.floor, dropped = self._frames.pop(self.first)
            self.first += 1
            self._bytes -= len(dropped)

    def holds(self, event_id: int) -> bool:
        """Whether the ring has every frame after ``event_id`` (or will have: the head)."""
        return self.floor <= event_id <= self.head

    def seq_after(self, event_id: int) -> int | None:
        """The sequence number of the first frame after ``event_id``; None
        when the ring does not hold what follows it."""
        if not self.holds(event_id):
            return None
        held = range(self.first, self.end)
        return self.first + bisect.bisect_right(held, event_id, key=self._event_id)

    def take(self, seq: int) -> tuple[bytes, int, int]:
        """Frames from ``seq`` (held, not the end) joined for one write:
        the chunk, the next sequence number, the last event id in it."""
        parts: list[bytes] = []
        size = 0
        while seq < self.end and size < WRITE_BYTES:
            event_id, frame = self._frames[seq]
            parts.append(frame)
            size += len(frame)
            seq += 1
        return b"".join(parts), seq, event_id

    def _event_id(self, seq: int) -> int:
        return self._frames[seq][0]


class Broadcast:
    """One facade subscription's frames, encoded once for all its clients.

    It starts at the log's head (``acp.initialize``'s ``last_event_id``),
    so a client resuming from there needs no catch-up. Clients register a
    wake-up, set on every new frame, on the end (``ended``) and on
    ``closing``. A client waiting in ``live`` is pushed its new frames
    instead, and woken only when its push fails.
    """

    def __init__(
        self,
        facade: Facade,
        partial: bool,
        closing: asyncio.Event,
        stored_json: StoredJson,
    ) -> None:
        self.facade = facade
        self._stored_json = stored_json
        self.partial = partial
        self.closing = closing
        self.ring: Ring | None = None
        self.ended = False
        self._started = asyncio.Event()
        self.wakes: set[asyncio.Event] = set()
        self.live: dict[asyncio.Event, Push] = {}  # a live client's wake-up -> its push
        self._loop = asyncio.get_running_loop()
        self._to_wake: deque[asyncio.Event] = deque()  # in order, each once
        self._queued: set[asyncio.Event] = set()
        self._tasks = (
            asyncio.create_task(self._pump()),
            asyncio.create_task(self._wake_on(closing)),
        )

    async def _pump(self) -> None:
        try:
            head = await _log_head(self.facade)
            ring = self.ring = Ring(head)
            self._started.set()
            stream = subscribe(self.facade, head, self.partial)
            try:
                async for message in stream:
                    event_id, frame = _encoded(message, self._stored_json)
                    ring.append(ring.head if event_id is None else event_id, frame)
                    self._wake_all()
            finally:
                await _aclose(stream)
        except Exception:
            log.exception("event subscription failed")
        finally:
            self.ended = True
            self._started.set()
            self.live.clear()
            self._wake_all()

    async def started(self) -> Ring | None:
        """The ring, once the log's head is known; None if the subscription failed first."""
        await self._started.wait()
        return self.ring

    async def _wake_on(self, closing: asyncio.Event) -> None:
        await closing.wait()
        self.live.clear()
        self._wake_all()

    def _wake_all(self) -> None:
        """Wake (or push to) every client, a slice per turn of the loop: a
        whole round of writes to hundreds of clients would hold up every
        request meanwhile. The first slice waits for the next turn, and a
        push writes every frame its client has not had in one go, so the
        frames of one moment (a result and its run's completion) cost each
        client one write rather than one each."""
        idle = not self._to_wake
        for wake in self.wakes - self._queued:
            self._to_wake.append(wake)
        self._queued.update(self._to_wake)
        if idle and self._to_wake:
            self._loop.call_soon(self._wake_slice)

    def _wake_slice(self) -> None:
        woken, until = 0, time.perf_counter() + PUSH_SLICE
        while self._to_wake and woken < WAKE_SLICE and time.perf_counter() < until:
            wake = self._to_wake.popleft()
            self._queued.discard(wake)
            push = self.live.get(wake)
            if push is None or not push():
                self.live.pop(wake, None)
                wake.set()
                woken += 1
        if self._to_wake:
            self._loop.call_soon(self._wake_slice)

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class FanOut:
    """The app's broadcasts: one per kind of stream while it has clients."""

    def __init__(
        self, facade: Facade, closing: asyncio.Event, stored_json: StoredJson = nothing_stored
    ) -> None:
        """``stored_json``: a whole result's JSON as the backend stored it,
        sent as it is rather than written again (``Store.stream_bodies``)."""
        self._facade = facade
        self._closing = closing
        self._stored_json = stored_json
        self._live: dict[bool, Broadcast] = {}

    @contextlib.asynccontextmanager
    async def joined(self, partial: bool, wake: asyncio.Event) -> AsyncIterator[Broadcast]:
        broadcast = self._live.get(partial)
        if broadcast is None or broadcast.ended:  # an ended one is replaced for newcomers
            broadcast = self._live[partial] = Broadcast(
                self._facade, partial, self._closing, self._stored_json
            )
        broadcast.wakes.add(wake)
        try:
            yield broadcast
        finally:
            broadcast.wakes.discard(wake)
            if not broadcast.wakes:
                if self._live.get(partial) is broadcast:
                    del self._live[partial]
                await broadcast.aclose()


async def sse_frames(
    fan_out: FanOut,
    after: int | None,
    keepalive: float,
    partial: bool = False,
    direct: ChunkSink | None = None,
) -> AsyncIterator[bytes]:
    """SSE frames of the events after ``after`` (from now when None), with
    keep-alive comments in between, until the stream ends or ``closing``.
    With ``direct``, the frames that come while this client is live go
    through it instead, and are not yielded."""
    wake = asyncio.Event()
    async with fan_out.joined(partial, wake) as broadcast:
        ring = await broadcast.started()
        if ring is None:
            return
        reader = _Reader(broadcast, ring, after, wake)
        quiet = _Quiet(keepalive, wake)
        push = None if direct is None else _pusher(reader, quiet, direct)
        try:
            yield CONNECTED  # in place: every event from here on will come
            while not broadcast.closing.is_set():
                wake.clear()  # before looking: a frame arriving after the look sets it
                chunk = reader.take()
                if chunk or quiet.overdue:
                    yield chunk or KEEP_ALIVE
                    quiet.sent()
                elif reader.finished:
                    return
                else:
                    if push is not None and reader.at_head:
                        broadcast.live[wake] = push
                    try:
                        await wake.wait()
                    finally:
                        broadcast.live.pop(wake, None)
        finally:
            quiet.cancel()
            await reader.aclose()


def _pusher(reader: _Reader, quiet: _Quiet, sink: ChunkSink) -> Push:
    """A live client's push: what it has not had, through ``sink``."""

    def push() -> bool:
        if reader.at_head:  # its task took what came before it went live
            return True
        if not reader.write_through(sink):
            return False
        quiet.sent()
        return True

    return push


class _Quiet:
    """Says when a client has been sent nothing for ``interval`` (and wakes
    it then). One timer, moved when it fires rather than at every frame:
    hundreds of clients re-arming a timer per event cost more than the
    writes themselves."""

    def __init__(self, interval: float, wake: asyncio.Event) -> None:
        self._interval = interval
        self._wake = wake
        self._loop = asyncio.get_running_loop()
        self._sent_at = self._loop.time()
        self.overdue = False
        self._timer = self._loop.call_at(self._sent_at + interval, self._check)

    def sent(self) -> None:
        self._sent_at = self._loop.time()
        self.overdue = False

    def _check(self) -> None:
        due = self._sent_at + self._interval
        if self._loop.time() >= due:
            self.overdue = True
            self._wake.set()
            due = self._loop.time() + self._interval
        self._timer = self._loop.call_at(due, self._check)

    def cancel(self) -> None:
        self._timer.cancel()


class _Reader:
    """One client's way through the frames: the broadcast's ring from its
    position, or, where the ring does not hold that, a ``_CatchUp``."""

    def __init__(
        self, broadcast: Broadcast, ring: Ring, after: int | None, wake: asyncio.Event
    ) -> None:
        self._broadcast = broadcast
        self._ring = ring
        self._wake = wake
        self._last = ring.head if after is None else after  # the last event id sent
        self._seq = ring.end  # the next frame to send from the ring
        self._catch_up: _CatchUp | None = None
        self.finished = False
        if after is not None:
            self._place()

    @property
    def at_head(self) -> bool:
        """Sent every frame the ring holds, and reads on from the ring."""
        return self._catch_up is None and self._seq == self._ring.end

    def write_through(self, sink: ChunkSink) -> bool:
        """Write the ring's frames from this client's position on through
        ``sink``; False, the position kept, where the ring no longer holds
        it or the sink refused (its task takes over)."""
        while self._seq < self._ring.end:
            if self._seq < self._ring.first:
                return False
            chunk, seq, last = self._ring.take(self._seq)
            if not sink(chunk):
                return False
            self._seq, self._last = seq, last
        return True

    def take(self) -> bytes | None:
        """The next chunk to send, if one is ready."""
        if self._catch_up is not None:
            return self._from_catch_up(self._catch_up)
        if self._seq < self._ring.first:  # fell behind the ring
            self._place()
            return self.take()
        if self._seq == self._ring.end:
            self.finished = self._broadcast.ended
            return None
        chunk, self._seq, self._last = self._ring.take(self._seq)
        return chunk

    def _place(self) -> None:
        """Go on right after ``_last``: in the ring, else from the log."""
        seq = self._ring.seq_after(self._last)
        if seq is None:
            self._catch_up = _CatchUp(self._broadcast, self._ring, self._last, self._wake)
        else:
            self._seq = seq

    def _from_catch_up(self, catch_up: _CatchUp) -> bytes | None:
        taken = catch_up.take()
        if taken is not None:
            chunk, self._last = taken
            return chunk
        if not catch_up.done:
            return None
        self._catch_up = None
        if not catch_up.rejoined:  # its subscription ended
            self.finished = True
            return None
        self._place()
        return self.take()

    async def aclose(self) -> None:
        if self._catch_up is not None:
            await self._catch_up.aclose()


class _CatchUp:
    """A client's own subscription from a position the ring does not hold,
    encoding for that client alone until the ring holds where it got to."""

    def __init__(self, broadcast: Broadcast, ring: Ring, after: int, wake: asyncio.Event) -> None:
        self._frames: asyncio.Queue[tuple[int | None, bytes]] = asyncio.Queue(CATCH_UP_BUFFER)
        self._last = after
        self.done = False
        self.rejoined = False  # done where the ring takes over
        stream = subscribe(broadcast.facade, after, broadcast.partial)
        self._task = asyncio.create_task(self._pump(stream, ring, wake))

    async def _pump(self, stream: AsyncIterator[Message], ring: Ring, wake: asyncio.Event) -> None:
        try:
            async for message in stream:
                event_id, frame = _encoded(message)
                await self._frames.put((event_id, frame))
                wake.set()
                if event_id is not None and ring.holds(event_id):
                    self.rejoined = True
                    return
        except Exception:
            log.exception("event subscription failed")
        finally:
            await _aclose(stream)
            self.done = True
            wake.set()

    def take(self) -> tuple[bytes, int] | None:
        """The frames read so far joined for one write, and the last event id in them."""
        parts: list[bytes] = []
        size = 0
        while not self._frames.empty() and size < WRITE_BYTES:
            event_id, frame = self._frames.get_nowait()
            parts.append(frame)
            size += len(frame)
            self._last = self._last if event_id is None else event_id
        return (b"".join(parts), self._last) if parts else None

    async def aclose(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def _log_head(facade: Facade) -> int:
    """The newest event's id: subscribing after it misses nothing that follows."""
    hello = await facade.dispatch("acp.initialize", {})
    return int(hello.get("last_event_id") or 0)


async def _aclose(stream: AsyncIterator[Message]) -> None:
    """End a subscription now (its generator's cleanup runs here, not when collected)."""
    if isinstance(stream, AsyncGenerator):
        await stream.aclose()


def _encoded(
    message: Message, stored_json: StoredJson = nothing_stored
) -> tuple[int | None, bytes]:
    """A message's event id and its frame, as the bytes written to every client."""
    return _event_id(message), _sse_frame(message, stored_json).encode()


def _params_json(event: Event, stored_json: StoredJson) -> str:
    """An event's params; a result the backend stored as it is goes in as
    that JSON (the same fields: ``store.result_body``), last."""
    if isinstance(event, ValidationResultEvent):
        body = stored_json(event.result)
        if body is not None:
            # Never "{}": an event's id and time have no default.
            rest = event.model_dump_json(exclude_defaults=True, exclude={"result"})
            return f'{rest[:-1]},"result":{body}}}'
    return event.model_dump_json(exclude_defaults=True)  # optional fields: schema


def _event_id(message: Message) -> int | None:
    if isinstance(message, Event):
        return message.event_id
    params = message.get("params")
    event_id = params.get("event_id") if isinstance(params, dict) else None
    return event_id if isinstance(event_id, int) else None


def _sse_frame(message: Message, stored_json: StoredJson = nothing_stored) -> str:
    if isinstance(message, Event):  # pydantic writes the JSON: no dict in between
        params_json = _params_json(message, stored_json)
        data = f'{{"jsonrpc":"2.0","method":{json.dumps(message.method)},"params":{params_json}}}'
        return f"id: {message.event_id}\ndata: {data}\n\n"
    event_id = _event_id(message)
    data = json.dumps(message, separators=(",", ":"))
    return f"id: {event_id}\ndata: {data}\n\n" if event_id is not None else f"data: {data}\n\n"
