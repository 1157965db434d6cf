"""The backend's one SQLite database: ``<data-dir>/acp.sqlite3``.

WAL mode lets an editor's server read while a CLI in a terminal writes; every
write is a short ``BEGIN IMMEDIATE`` transaction and ``busy_timeout`` makes a
second process wait for the lock instead of failing. The schema version lives
in ``PRAGMA user_version``; ``MIGRATIONS`` is append-only.

Calls are synchronous: each statement is an index lookup that takes
microseconds, cheaper than a thread hop.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import stat
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_backend.ids import is_ulid
from acp_client.errors import InvalidParams, InvalidState, NotFound
from acp_client.models import FINDINGS, ValidationResult

log = logging.getLogger(__name__)

DATABASE_NAME = "acp.sqlite3"
BUSY_TIMEOUT_MS = 5000
HISTORY_ENV = "ACP_RESULT_HISTORY"
DEFAULT_HISTORY = 10  # results kept per validation (the latest and 9 before it)
PARSED_FINDINGS = 20_000
"""Findings of parsed results kept (~10 MB at most); a larger result is parsed each read."""


def limit_from_env(name: str, default: int, what: str) -> int:
    """A positive integer setting from ``$name``, else ``default``."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    if not raw.strip().isdecimal() or int(raw) < 1:
        raise InvalidState(
            f"${name} is {raw!r}, not a positive integer",
            remedy=f"unset {name} or set it to {what}",
        )
    return int(raw)


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
    Migration(
        3,
        "a validation.result event refers to its stored result; events count their bytes",
        (
            "ALTER TABLE events ADD COLUMN result_id TEXT",
            # The event's size (its params, plus the result it refers to) and the
            # running total up to it: retention by bytes is one indexed lookup.
            "ALTER TABLE events ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE events ADD COLUMN upto INTEGER NOT NULL DEFAULT 0",
            """UPDATE events SET
                result_id = json_extract(params, '$.result.id'),
                params = json_set(params, '$.result', json('null'))
              WHERE method = 'validation.result'
                AND json_extract(params, '$.result.id') IN (SELECT id FROM validation_results)""",
            """UPDATE events SET bytes = length(CAST(params AS BLOB)) + coalesce(
                (SELECT length(CAST(r.body AS BLOB)) FROM validation_results AS r
                 WHERE r.id = events.result_id), 0)""",
            """UPDATE events SET upto = running.total FROM
                (SELECT id, sum(bytes) OVER (ORDER BY id) AS total FROM events) AS running
              WHERE running.id = events.id""",
            "CREATE INDEX events_by_upto ON events(upto)",
            "CREATE INDEX events_by_result ON events(result_id) WHERE result_id IS NOT NULL",
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


def private_files(database: Path) -> None:
    """Make the database and its WAL and shared-memory files owner-only.

    SQLite creates ``-wal`` and ``-shm`` with the database file's mode, and
    the database with the umask's: create it 0600 first, whatever the data
    dir allows, and tighten files an older version left readable.
    """
    with suppress(FileExistsError):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    if os.name == "nt":
        return  # modes are ACLs there
    for path in (database, *(database.with_name(database.name + s) for s in ("-wal", "-shm"))):
        try:
            info = path.stat()
        except FileNotFoundError:
            continue
        if stat.S_IMODE(info.st_mode) & 0o077 and info.st_uid == os.geteuid():
            path.chmod(0o600)


_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_NOT_WRITABLE = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM}
_DISK_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def store_failure(exc: sqlite3.Error | OSError, path: Path) -> InvalidState | None:
    """The error a client sees when the disk or the file fails us, with what
    to do; ``None`` for anything else."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF
    if primary in _DAMAGED:
        return InvalidState(
            f"the database {path} is damaged ({exc})",
            remedy="move it aside to start with an empty one, or restore a backup",
        )
    if primary == sqlite3.SQLITE_FULL or getattr(exc, "errno", None) in _DISK_FULL:
        return InvalidState(
            f"cannot write {path}: the disk is full ({exc})",
            remedy="free some space (or raise the file size limit), then retry",
        )
    if primary == sqlite3.SQLITE_IOERR:  # what a write past RLIMIT_FSIZE gives, too
        return InvalidState(
            f"cannot read or write {path} ({exc})",
            remedy="the disk may be full or failing: free some space, then retry",
        )
    if primary in _NOT_WRITABLE or isinstance(exc, PermissionError):
        return InvalidState(
            f"cannot write to the data dir {path.parent} ({exc})",
            remedy="make it writable, or choose another with --data-dir or $ACP_DATA_DIR",
        )
    if isinstance(exc, OSError):
        return InvalidState(
            f"cannot use the data dir {path.parent} ({exc})",
            remedy="check its disk and permissions, or choose another with --data-dir",
        )
    return None


def _user_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


class ParsedResults:
    """Stored results already parsed, by id, the most recent first, within
    ``PARSED_FINDINGS`` findings. A result is never changed once stored
    (only pruned), and its model is frozen, so one parse serves every read:
    a hover reads every latest result of its resource, and parsing them
    again each time was a quarter of its backend time."""

    def __init__(self) -> None:
        self._held: OrderedDict[str, ValidationResult] = OrderedDict()
        self._findings = 0
        self._lock = threading.Lock()

    def get(self, result_id: str, body: str) -> ValidationResult:
        with self._lock:
            found = self._held.get(result_id)
            if found is not None:
                self._held.move_to_end(result_id)
                return found
        result = ValidationResult.model_validate_json(body)
        size = len(result.findings) + 1
        if size > PARSED_FINDINGS:
            return result
        with self._lock:
            if result_id not in self._held:
                self._held[result_id] = result
                self._findings += size
            while self._findings > PARSED_FINDINGS:
                _, dropped = self._held.popitem(last=False)
                self._findings -= len(dropped.findings) + 1
        return result


class Store:
    """One connection to the data dir's database, shared by the backend's parts."""

    def __init__(
        self,
        data_dir: Path,
        *,
        migrations: Sequence[Migration] = MIGRATIONS,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        result_history: int | None = None,
    ) -> None:
        """``result_history`` (else ``$ACP_RESULT_HISTORY``, else 10): results
        kept per validation, beyond those a retained event still refers to."""
        self.data_dir = data_dir
        self.result_history = result_history or limit_from_env(
            HISTORY_ENV, DEFAULT_HISTORY, "how many results to keep per validation"
        )
        if data_dir.exists() and not data_dir.is_dir():
            raise InvalidState(
                f"the data dir {data_dir} is not a directory",
                remedy="choose another one with --data-dir or $ACP_DATA_DIR",
            )
        self.path = data_dir / DATABASE_NAME
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = threading.RLock()
        self._parsed = ParsedResults()
        self._streamed: deque[tuple[ValidationResult, str]] | None = None  # see stream_bodies
        with self.failures():
            data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            private_files(self.path)
            # Autocommit mode: transactions are explicit (see ``write``).
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._conn.row_factory = sqlite3.Row
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

    @contextmanager
    def failures(self) -> Iterator[None]:
        """Turn what the disk or the file can do to us into one clear error."""
        try:
            yield
        except (sqlite3.DatabaseError, OSError) as exc:
            failure = store_failure(exc, self.path)
            if failure is None:
                raise  # a bug (bad SQL, a constraint): keep it loud
            raise failure from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the database lock up front.

        ``BEGIN IMMEDIATE`` (not a deferred upgrade) so a concurrent writer
        waits on ``busy_timeout`` instead of failing with SQLITE_BUSY.
        """
        with self._lock, self.failures():
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
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # a failed COMMIT may have ended it
                    self._conn.execute("ROLLBACK")
                raise

    def data_version(self) -> int:
        """SQLite's ``data_version``: it moves when another connection (another
        process) commits, not on this store's own writes."""
        with self._lock, self.failures():
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock, self.failures():
            return self._conn.execute(sql, params).fetchall()

    # --- validation results ----------------------------------------------

    def insert_result(
        self,
        result: ValidationResult,
        along: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """Persist a result; its resource must exist (NotFound otherwise).
        ``along`` writes in the same transaction (the event announcing it)."""
        body = result_body(result)  # outside the lock: readers need not wait for it
        if self._streamed is not None:
            self._streamed.append((result, body))
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
                        body,
                    ),
                )
                self.prune_results(conn, [result.id])
                if along is not None:
                    along(conn)
        except sqlite3.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc):
                raise NotFound(f"resource {result.resource_id} is not registered") from exc
            raise

    def stream_bodies(self) -> Callable[[ValidationResult], str | None]:
        """From now on keep the JSON of the last few results stored
        (``STREAMED_BODIES``), and return its look-up by the very result
        object: an event stream sends a whole result as written here rather
        than write its findings to JSON again (~10 ms on the server's loop
        per 10,000). Off unless asked: in local mode nothing would read
        them, and a body is as big as its result."""
        streamed = self._streamed = deque(maxlen=STREAMED_BODIES)

        def body_of(result: ValidationResult) -> str | None:
            # A copy taken holding the GIL: the store's thread appends meanwhile.
            return next((body for kept, body in tuple(streamed) if kept is result), None)

        return body_of

    def result(self, result_id: str) -> ValidationResult | None:
        """A stored result by id; None when it is not (or no longer) stored."""
        rows = self.query("SELECT body FROM validation_results WHERE id = ?", (result_id,))
        return self._parsed.get(result_id, rows[0]["body"]) if rows else None

    def prune_results(self, conn: sqlite3.Connection, result_ids: Sequence[str]) -> None:
        """Within a write: for the validation of each of ``result_ids``, forget
        the results older than its history that no retained event refers to."""
        for result_id in result_ids:
            conn.execute(
                """DELETE FROM validation_results WHERE id IN (
                    SELECT old.id FROM validation_results AS old
                    JOIN validation_results AS this ON this.id = ?
                    WHERE old.resource_id = this.resource_id AND old.plan_id IS this.plan_id
                      AND old.validation = this.validation
                    ORDER BY old.id DESC LIMIT -1 OFFSET ?)
                  AND id NOT IN (SELECT result_id FROM events WHERE result_id IS NOT NULL)""",
                (result_id, self.result_history),
            )

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
        page = [self._parsed.get(row["id"], row["body"]) for row in rows[:limit]]
        next_cursor = page[-1].id if len(rows) > limit else None
        return page, next_cursor


_FINDINGS_PER_CALL = 500
STREAMED_BODIES = 4
"""Results whose JSON ``stream_bodies`` keeps: enough for the validations of
a run that finish together, whose events the loop encodes a moment later."""


def result_body(result: ValidationResult) -> str:
    """A result as stored: its JSON without the values at their default (a
    finding's null fields were more than half of a result's bytes), the
    findings written 500 at a time. Writing them in one call held the GIL
    for ~8 ms per 10,000 findings, and in local mode the language server's
    event loop waited that long on the backend's thread."""
    head = result.model_dump_json(exclude_defaults=True, exclude={"findings"})
    findings = result.findings
    if not findings:
        return head
    parts = [
        FINDINGS.dump_json(findings[start : start + _FINDINGS_PER_CALL], exclude_defaults=True)
        for start in range(0, len(findings), _FINDINGS_PER_CALL)
    ]
    written = b",".join(part[1:-1] for part in parts).decode()
    return f'{head[:-1]},"findings":[{written}]}}'
