"""The backend's one SQLite database: ``<data-dir>/acp.sqlite3``.

WAL mode lets an editor's server read while a CLI in a terminal writes; every
write is a short ``BEGIN IMMEDIATE`` transaction and ``busy_timeout`` makes a
second process wait for the lock instead of failing. The schema version lives
in ``PRAGMA user_version``; ``MIGRATIONS`` is append-only.

Calls are synchronous: each statement is an index lookup that takes
microseconds, cheaper than a thread hop.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_backend.ids import is_ulid
from acp_client.errors import InvalidParams, InvalidState, NotFound
from acp_client.models import ValidationResult

log = logging.getLogger(__name__)

DATABASE_NAME = "acp.sqlite3"
BUSY_TIMEOUT_MS = 5000


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "resources, sandbox roots, events, validation results",
        (
            """CREATE TABLE resources (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                root TEXT NOT NULL UNIQUE,
                created_at TEXT NOT NULL
            )""",
            """CREATE TABLE sandbox_roots (
                root TEXT PRIMARY KEY,
                resource_id TEXT NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
                created_at TEXT NOT NULL
            )""",
            "CREATE INDEX sandbox_roots_by_resource ON sandbox_roots(resource_id)",
            """CREATE TABLE events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                method TEXT NOT NULL,
                params TEXT NOT NULL,
                at TEXT NOT NULL
            )""",
            """CREATE TABLE validation_results (
                id TEXT PRIMARY KEY,
                resource_id TEXT NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
                validation TEXT NOT NULL,
                plan_id TEXT,
                run_id TEXT NOT NULL,
                finished_at TEXT NOT NULL,
                passed INTEGER NOT NULL,
                mode TEXT NOT NULL,
                body TEXT NOT NULL
            )""",
            # "Latest per validation" is a max(id) within (resource, plan, validation).
            """CREATE INDEX validation_results_latest
                ON validation_results(resource_id, plan_id, validation, id)""",
            "CREATE INDEX validation_results_by_run ON validation_results(run_id)",
        ),
    ),
    Migration(
        2,
        "plans, their change sets, and the lines applied plans changed",
        (
            """CREATE TABLE plans (
                id TEXT PRIMARY KEY,
                resource_id TEXT NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
                state TEXT NOT NULL,
                worker_pid INTEGER,
                body TEXT NOT NULL,
                changes TEXT NOT NULL
            )""",
            "CREATE INDEX plans_by_resource ON plans(resource_id, state)",
            # Lines of the new content each applied plan produced (hover provenance).
            """CREATE TABLE plan_applied_lines (
                plan_id TEXT NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
                resource_id TEXT NOT NULL,
                path TEXT NOT NULL,
                start_line INTEGER NOT NULL,
                end_line INTEGER NOT NULL,
                applied_at TEXT NOT NULL
            )""",
            """CREATE INDEX plan_applied_lines_by_path
                ON plan_applied_lines(resource_id, path, start_line)""",
        ),
    ),
)


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the schema up to the last migration; returns the version reached.

    Safe when several processes open a fresh data dir at once: the version is
    re-read under the write lock, so each migration runs exactly once.
    """
    latest = len(migrations)
    if _user_version(conn) == latest:
        return latest
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = _user_version(conn)
        if current > latest:
            raise InvalidState(
                f"the database was written by a newer acp-backend (schema {current}, "
                f"this one knows {latest})",
                remedy="upgrade acp-lsp, or use another --data-dir",
            )
        for migration in migrations[current:]:
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {int(migration.version)}")
            log.info("schema migrated to %d: %s", migration.version, migration.description)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return latest


def _enable_wal(conn: sqlite3.Connection, timeout_ms: int) -> str:
    """Switch to WAL; returns the journal mode in force.

    Switching a fresh database needs an exclusive lock, and SQLite does not
    call the busy handler for it: when another process is opening the same
    fresh data dir, retry until the busy timeout instead of failing at once.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _user_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


class Store:
    """One connection to the data dir's database, shared by the backend's parts."""

    def __init__(
        self,
        data_dir: Path,
        *,
        migrations: Sequence[Migration] = MIGRATIONS,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        self.data_dir = data_dir
        if data_dir.exists() and not data_dir.is_dir():
            raise InvalidState(
                f"the data dir {data_dir} is not a directory",
                remedy="choose another one with --data-dir or $ACP_DATA_DIR",
            )
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = data_dir / DATABASE_NAME
        self._busy_timeout_ms = busy_timeout_ms
        # Autocommit mode: transactions are explicit (see ``write``).
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            mode = _enable_wal(self._conn, busy_timeout_ms)
            if str(mode).lower() != "wal":
                log.warning("%s: WAL unavailable (journal mode %s)", self.path, mode)
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self.schema_version = migrate(self._conn, migrations)
        except BaseException:
            self._conn.close()
            raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the database lock up front.

        ``BEGIN IMMEDIATE`` (not a deferred upgrade) so a concurrent writer
        waits on ``busy_timeout`` instead of failing with SQLITE_BUSY.
        """
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY:
                    raise
                raise InvalidState(
                    f"the database {self.path} stayed locked by another process "
                    f"for {self._busy_timeout_ms} ms",
                    remedy="retry; if it persists, look for a stuck acp-backend process",
                ) from exc
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    # --- validation results ----------------------------------------------

    def insert_result(self, result: ValidationResult) -> None:
        """Persist a result; its resource must exist (NotFound otherwise)."""
        try:
            with self.write() as conn:
                conn.execute(
                    "INSERT INTO validation_results (id, resource_id, validation, plan_id, "
                    "run_id, finished_at, passed, mode, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        result.id,
                        result.resource_id,
                        result.validation,
                        result.plan_id,
                        result.run_id,
                        result.finished_at.isoformat(),
                        int(result.passed),
                        str(result.mode),
                        result.model_dump_json(),
                    ),
                )
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                raise NotFound(f"resource {result.resource_id} is not registered") from exc
            raise

    def latest_results(
        self,
        resource_id: str,
        plan_id: str | None = None,
        after: str | None = None,
        limit: int = 200,
        history: bool = False,
    ) -> tuple[list[ValidationResult], str | None]:
        """One page of results, in id (= creation) order, and the next page's cursor.

        ``plan_id=None`` selects results about the resource itself, a plan id
        those about that plan's sandbox. Without ``history`` only the newest
        result of each validation is returned. The cursor is the id of the
        last result on the page; ``None`` means there is no further page.
        """
        if after is not None and not is_ulid(after):
            raise InvalidParams(
                f"params.after: {after!r} is not a cursor from this backend",
                remedy="pass the next_cursor of a previous page, or omit it",
            )
        if limit < 1:
            raise InvalidParams("params.limit: must be at least 1")
        latest_only = (
            ""
            if history
            else "AND r.id = (SELECT max(l.id) FROM validation_results AS l"
            " WHERE l.resource_id = r.resource_id AND l.plan_id IS r.plan_id"
            " AND l.validation = r.validation)"
        )
        rows = self.query(
            "SELECT r.id, r.body FROM validation_results AS r"
            f" WHERE r.resource_id = ? AND r.plan_id IS ? AND r.id > ? {latest_only}"
            " ORDER BY r.id LIMIT ?",
            (resource_id, plan_id, after or "", limit + 1),
        )
        page = [ValidationResult.model_validate_json(row["body"]) for row in rows[:limit]]
        next_cursor = page[-1].id if len(rows) > limit else None
        return page, next_cursor
