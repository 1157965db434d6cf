"""The persistent event log: monotonic ids, bounded retention, live delivery.

Events are rows of the ``events`` table; the row id is the event id, so ids
are monotonic across every process writing to the data dir. Subscribers in
this process are woken at once by ``publish``; events another process
writes (a CLI in a terminal) are noticed by a cheap indexed query every
``poll_interval`` seconds, and only while someone is waiting for events.

A ``validation.result`` whose result is already stored keeps only a
reference to it (``result_id``): the result is stored once, and a
subscriber gets it back in full, so the wire format is unchanged.
Retention keeps the newest ``retention`` events and at most
``retention_bytes`` of them (each counted with the result it refers to);
the newest event is always kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import Any, TypeVar

from acp_backend.store import Store, limit_from_env
from acp_client.events import Event, StreamReset, ValidationResultEvent

log = logging.getLogger(__name__)

E = TypeVar("E", bound=Event)

DEFAULT_RETENTION = 10_000
RETENTION_BYTES_ENV = "ACP_EVENT_RETENTION_BYTES"
DEFAULT_RETENTION_BYTES = 32 << 20
DEFAULT_POLL_INTERVAL = 0.25
_REPLAY_BATCH = 500


class EventLog:
    def __init__(
        self,
        store: Store,
        *,
        retention: int = DEFAULT_RETENTION,
        retention_bytes: int | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> None:
        """``retention_bytes``: else ``$ACP_EVENT_RETENTION_BYTES``, else 32 MiB."""
        if retention < 1:
            raise ValueError("retention must keep at least one event")
        self._store = store
        self.retention = retention
        self.retention_bytes = retention_bytes or limit_from_env(
            RETENTION_BYTES_ENV, DEFAULT_RETENTION_BYTES, "how many bytes of events to keep"
        )
        self.poll_interval = poll_interval
        # Replaced on every publish: a waiter holds the one current when it
        # last looked at the table, so no wake-up falls between look and wait.
        self._published = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # the subscribers' loop
        self._closed = False

    def publish(self, event_type: type[E], **fields: Any) -> E:
        """Append an event; returns it with its id and time assigned.

        Callable from any thread; subscribers are woken on their own loop.
        """
        at = datetime.now(UTC)
        # Validate before writing: a malformed event must never reach the log.
        draft = event_type.model_validate({**fields, "event_id": 0, "at": at})
        result_id = (  # a partial result is logged as it is (ADR 0017)
            draft.result.id
            if isinstance(draft, ValidationResultEvent) and draft.covered is None
            else None
        )
        with self._store.write() as conn:
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
                (event_type.method, text, at.isoformat(), result_id, size, before + size),
            )
            event_id = int(cursor.lastrowid or 0)
            self._retain(conn, event_id, before + size)
        self._wake()
        return draft.model_copy(update={"event_id": event_id})

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
        """Notifications after ``after`` (from now when ``None``), then live ones.

        A ``stream.reset`` comes first when ``after`` is an id this log never
        issued, or when events right after it are no longer retained (asked
        too late, or a consumer so slow that retention overtook it); its
        event id is the one the stream continues after.
        """
        self._loop = asyncio.get_running_loop()
        last = self.last_id()
        if after is None:
            after = last
        elif after > last:
            yield self._reset(last, f"event id {after} was never issued by this backend")
            after = last
        while not self._closed:
            published = self._published
            rows = self._store.query(
                "SELECT e.id, e.method, e.params, e.result_id, r.body FROM events AS e"
                " LEFT JOIN validation_results AS r ON r.id = e.result_id"
                " WHERE e.id > ? ORDER BY e.id LIMIT ?",
                (after, _REPLAY_BATCH),
            )
            # Ids are contiguous (AUTOINCREMENT, and a rolled-back insert takes
            # its id back), so a gap means retention deleted those events.
            if rows and rows[0]["id"] > after + 1:
                yield self._reset(rows[0]["id"] - 1, f"events after {after} are no longer retained")
            for row in rows:
                after = int(row["id"])
                params = {"event_id": after, **json.loads(row["params"])}
                if row["result_id"] is not None:
                    if row["body"] is None:
                        continue  # its resource was unregistered, its results with it
                    params["result"] = json.loads(row["body"])
                yield {"jsonrpc": "2.0", "method": row["method"], "params": params}
            if len(rows) == _REPLAY_BATCH:
                continue  # more to replay: no waiting
            try:
                async with asyncio.timeout(self.poll_interval):
                    await published.wait()
            except TimeoutError:
                pass  # time to look for events other processes wrote

    def close(self) -> None:
        """End every subscription (each finishes its current wait)."""
        self._closed = True
        self._wake()

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

    def _reset(self, continue_after: int, reason: str) -> dict[str, Any]:
        reset = StreamReset(
            event_id=continue_after,
            at=datetime.now(UTC),
            reason=reason,
            oldest_event_id=self.oldest_id(),
        )
        return reset.to_notification()
