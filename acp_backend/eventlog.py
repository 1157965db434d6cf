"""The persistent event log: monotonic ids, bounded retention, live delivery.

Events are rows of the ``events`` table; the row id is the event id, so ids
are monotonic across every process writing to the data dir. Subscribers in
this process are woken at once by ``publish``; those in other processes on
the data dir (an editor's server, while a CLI in a terminal writes) by the
wake-up channel (``acp_backend.wakeup``, ADR 0029), and they look again
every ``recheck_interval`` seconds for a writer that did not notify. Where
the platform has no channel, they look every ``poll_interval`` seconds.

A ``validation.result`` whose result is already stored keeps only a
reference to it (``result_id``): the result is stored once, and a
subscriber gets it back in full, so the wire format is unchanged.
An event published in this process is handed to this process's subscribers
as the same (frozen) object, until each of them has passed it: no reading
the result back, no parsing it again (ADR 0018).
Retention keeps the newest ``retention`` events and at most
``retention_bytes`` of them (each counted with the result it refers to);
the newest event is always kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from acp_backend.store import Store, limit_from_env
from acp_backend.wakeup import WakeChannel
from acp_client.events import EVENT_TYPES, Event, StreamReset, ValidationResultEvent

log = logging.getLogger(__name__)

E = TypeVar("E", bound=Event)

DEFAULT_RETENTION = 10_000
RETENTION_BYTES_ENV = "ACP_EVENT_RETENTION_BYTES"
DEFAULT_RETENTION_BYTES = 32 << 20
DEFAULT_POLL_INTERVAL = 0.25  # without a wake-up channel
DEFAULT_RECHECK_INTERVAL = 5.0  # with one: for a writer that did not notify (an older version)
_REPLAY_BATCH = 500
_HANDED_MAX = 256  # events kept for a stalled subscriber before it reads them back


class EventLog:
    def __init__(
        self,
        store: Store,
        *,
        retention: int = DEFAULT_RETENTION,
        retention_bytes: int | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        recheck_interval: float = DEFAULT_RECHECK_INTERVAL,
        wakeups: WakeChannel | None = None,
    ) -> None:
        """``retention_bytes``: else ``$ACP_EVENT_RETENTION_BYTES``, else 32 MiB;
        ``wakeups``: else the channel beside the store's data dir."""
        if retention < 1:
            raise ValueError("retention must keep at least one event")
        self._store = store
        self.retention = retention
        self.retention_bytes = retention_bytes or limit_from_env(
            RETENTION_BYTES_ENV, DEFAULT_RETENTION_BYTES, "how many bytes of events to keep"
        )
        self.poll_interval = poll_interval
        self.recheck_interval = recheck_interval
        self._wakeups = wakeups if wakeups is not None else WakeChannel.beside(store.data_dir)
        # Replaced on every publish: a waiter holds the one current when it
        # last looked at the table, so no wake-up falls between look and wait.
        self._published = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # the subscribers' loop
        self._closed = False
        # Published here and not yet passed by every subscriber here, by id.
        self._handed: dict[int, Event] = {}
        self._positions: dict[object, int] = {}  # each live subscriber's last id
        self._handing = threading.Lock()  # publish may run on another thread

    def publish(self, event_type: type[E], **fields: Any) -> E:
        """Append an event; returns it with its id and time assigned.

        Callable from any thread; subscribers are woken on their own loop.
        """
        pending = self.prepare(event_type, **fields)
        with self._store.write() as conn:
            pending.write(conn)
        return pending.announce()

    def prepare(self, event_type: type[E], **fields: Any) -> PendingEvent[E]:
        """An event to write within a transaction of the caller's (with what
        it announces: a result and its event commit together, or neither),
        then to ``announce`` once that has committed."""
        # Validate before writing: a malformed event must never reach the log.
        # Its id and time are placeholders until ``write`` logs it.
        draft = event_type.model_validate({**fields, "event_id": 0, "at": datetime.now(UTC)})
        return PendingEvent(self, draft)

    def _append(self, conn: sqlite3.Connection, draft: E) -> E:
        draft = draft.model_copy(update={"at": datetime.now(UTC)})  # as it is logged
        result_id = (  # a partial result is logged as it is (ADR 0017)
            draft.result.id
            if isinstance(draft, ValidationResultEvent) and draft.covered is None
            else None
        )
        stored = (
            conn.execute(
                "SELECT length(CAST(body AS BLOB)) FROM validation_results WHERE id = ?",
                (result_id,),
            ).fetchone()
            if result_id
            else None
        )
        if stored is None:
            result_id, result_bytes = None, 0
            params = draft.model_dump(mode="json", exclude={"event_id"})
        else:  # the result is in its table: refer to it, "result" keeps its place
            result_bytes = int(stored[0])
            params = draft.model_dump(mode="json", exclude={"event_id", "result"})
            params["result"] = None
        text = json.dumps(params)
        size = len(text.encode()) + result_bytes
        (before,) = conn.execute("SELECT coalesce(max(upto), 0) FROM events").fetchone()
        cursor = conn.execute(
            "INSERT INTO events (method, params, at, result_id, bytes, upto)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (draft.method, text, draft.at.isoformat(), result_id, size, before + size),
        )
        event_id = int(cursor.lastrowid or 0)
        self._retain(conn, event_id, before + size)
        return draft.model_copy(update={"event_id": event_id})

    def _announce(self, event: Event) -> None:
        """After the commit: hand the event to this process's subscribers, wake
        them and every other process's."""
        with self._handing:
            if self._positions:
                self._handed[event.event_id] = event
                while len(self._handed) > _HANDED_MAX:
                    del self._handed[next(iter(self._handed))]
        self._wake()
        self._wakeups.notify()

    def _retain(self, conn: sqlite3.Connection, newest: int, upto: int) -> None:
        """Forget the events beyond the count and the bytes kept, then the
        results only they referred to (beyond their validation's history)."""
        # Kept by bytes: the events after the newest one whose running total
        # leaves the rest within budget (never the newest itself).
        threshold = upto - self.retention_bytes
        row = (
            conn.execute(
                "SELECT id FROM events WHERE upto >= ? ORDER BY upto LIMIT 1", (threshold,)
            ).fetchone()
            if threshold > 0
            else None
        )
        by_bytes = min(newest, int(row[0]) + 1) if row else 0
        first_kept = max(newest - self.retention + 1, by_bytes)
        released = [
            r[0]
            for r in conn.execute(
                "SELECT result_id FROM events WHERE id < ? AND result_id IS NOT NULL",
                (first_kept,),
            )
        ]
        conn.execute("DELETE FROM events WHERE id < ?", (first_kept,))
        self._store.prune_results(conn, released)

    def last_id(self) -> int:
        """The id of the newest event ever written (0 before the first)."""
        rows = self._store.query("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
        return int(rows[0]["seq"]) if rows else 0

    def oldest_id(self) -> int | None:
        rows = self._store.query("SELECT min(id) AS oldest FROM events")
        oldest = rows[0]["oldest"]
        return None if oldest is None else int(oldest)

    async def subscribe(self, after: int | None = None) -> AsyncGenerator[dict[str, Any], None]:
        """``events`` as JSON-RPC notification dicts (the wire format)."""
        async for event in self.events(after):
            yield event.to_notification()

    async def events(self, after: int | None = None) -> AsyncGenerator[Event, None]:
        """Events after ``after`` (from now when ``None``), then live ones.

        A ``StreamReset`` comes first when ``after`` is an id this log never
        issued, or when events right after it are no longer retained (asked
        too late, or a consumer so slow that retention overtook it); its
        event id is the one the stream continues after. An event another
        process wrote in a newer format than this one knows is skipped.
        This process's own events are handed over from memory while held
        (the last ``_HANDED_MAX``): no query per event, and none of them
        lost to retention meanwhile.
        """
        self._loop = asyncio.get_running_loop()
        last = self.last_id()
        if after is None:
            after = last
        elif after > last:
            yield self._reset(last, f"event id {after} was never issued by this backend")
            after = last
        me = object()
        self._passed(me, after)
        try:
            # Listening before the first look: whatever is committed after it wakes us.
            woken = self._wakeups.listen(self._wake)
            between_looks = self.recheck_interval if woken else self.poll_interval
            while not self._closed:
                published = self._published
                # The next one is this process's own, handed over as it was
                # published: no query (ids are contiguous, so none is skipped).
                handed = self._handed.get(after + 1)
                if handed is not None:
                    after += 1
                    yield handed
                    self._passed(me, after)
                    continue
                rows = self._store.query(
                    "SELECT id, method, params, result_id FROM events"
                    " WHERE id > ? ORDER BY id LIMIT ?",
                    (after, _REPLAY_BATCH),
                )
                # Ids are contiguous (AUTOINCREMENT, and a rolled-back insert takes
                # its id back), so a gap means retention deleted those events.
                if rows and rows[0]["id"] > after + 1:
                    yield self._reset(
                        rows[0]["id"] - 1, f"events after {after} are no longer retained"
                    )
                for row in rows:
                    after = int(row["id"])
                    event = self._handed.get(after) or self._read(row)
                    if event is not None:
                        yield event
                    self._passed(me, after)
                if len(rows) == _REPLAY_BATCH:
                    continue  # more to replay: no waiting
                try:
                    async with asyncio.timeout(between_looks):
                        await published.wait()
                except TimeoutError:
                    pass  # time to look for events a process wrote without a wake-up
        finally:
            self._wakeups.release()
            self._passed(me, None)

    def _passed(self, subscriber: object, event_id: int | None) -> None:
        """Note where ``subscriber`` is (None: gone) and forget the handed
        events every subscriber has passed."""
        with self._handing:
            if event_id is None:
                self._positions.pop(subscriber, None)
            else:
                self._positions[subscriber] = event_id
            oldest = min(self._positions.values(), default=None)
            for handed in [i for i in self._handed if oldest is None or i <= oldest]:
                del self._handed[handed]

    def _read(self, row: sqlite3.Row) -> Event | None:
        """The event of a row, with its stored result; None when it cannot
        be (its result went with its resource, or a newer format)."""
        params = {"event_id": row["id"], **json.loads(row["params"])}
        try:
            if row["result_id"] is not None:
                params["result"] = self._store.result(row["result_id"])
                if params["result"] is None:
                    return None  # its resource was unregistered, its results with it
            return EVENT_TYPES[row["method"]].model_validate(params)
        except (KeyError, ValueError) as exc:
            log.warning("skipping event %s (%s): %s", row["id"], row["method"], exc)
            return None

    def close(self) -> None:
        """End every subscription (each finishes its current wait)."""
        self._closed = True
        self._wake()
        self._wakeups.close()

    def _wake(self) -> None:
        published, self._published = self._published, asyncio.Event()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self._loop is not None and running is not self._loop and not self._loop.is_closed():
            # Published from another thread: asyncio.Event is not thread-safe.
            self._loop.call_soon_threadsafe(published.set)
        else:
            published.set()

    def _reset(self, continue_after: int, reason: str) -> StreamReset:
        return StreamReset(
            event_id=continue_after,
            at=datetime.now(UTC),
            reason=reason,
            oldest_event_id=self.oldest_id(),
        )


class PendingEvent(Generic[E]):
    """``EventLog.prepare``'s event: ``write`` it in the caller's transaction,
    then ``announce`` it once that has committed (never if it rolled back)."""

    def __init__(self, log: EventLog, draft: E) -> None:
        self._log = log
        self._draft = draft
        self._written: E | None = None

    def write(self, conn: sqlite3.Connection) -> None:
        self._written = self._log._append(conn, self._draft)

    def announce(self) -> E:
        assert self._written is not None, "announced before it was written"
        self._log._announce(self._written)
        return self._written
