"""The SQLite store: pragmas, migrations, concurrent opening, the results API."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from acp_backend import store as store_module
from acp_backend.registry import Registry
from acp_backend.store import DATABASE_NAME, MIGRATIONS, Migration, Store
from acp_client.errors import InvalidParams, InvalidState, NotFound
from acp_client.models import ValidationResult
from tests.support import factories

LATEST = len(MIGRATIONS)


def test_migrations_are_numbered_one_by_one() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST + 1))


def test_fresh_data_dir_gets_wal_and_the_full_schema(data_dir: Path) -> None:
    store = Store(data_dir)
    try:
        assert store.path == data_dir / DATABASE_NAME
        assert store.schema_version == LATEST
        pragma = {
            name: store.query(f"PRAGMA {name}")[0][0]
            for name in ("journal_mode", "foreign_keys", "busy_timeout", "user_version")
        }
        assert pragma == {
            "journal_mode": "wal",
            "foreign_keys": 1,
            "busy_timeout": 5000,
            "user_version": LATEST,
        }
        tables = {row[0] for row in store.query("SELECT name FROM sqlite_master")}
        assert {"resources", "sandbox_roots", "events", "validation_results"} <= tables
    finally:
        store.close()


def test_reopening_keeps_data_and_does_not_migrate_again(data_dir: Path) -> None:
    first = Store(data_dir)
    with first.write() as conn:
        conn.execute("INSERT INTO resources VALUES ('r1', 'one', '/one', '2026-01-01T00:00:00Z')")
    first.close()
    second = Store(data_dir)
    try:
        assert [row["name"] for row in second.query("SELECT name FROM resources")] == ["one"]
        assert second.schema_version == LATEST
    finally:
        second.close()


def test_an_existing_database_is_upgraded_by_a_new_migration(data_dir: Path) -> None:
    Store(data_dir).close()
    extra = Migration(
        LATEST + 1, "a test column", ("ALTER TABLE resources ADD COLUMN note TEXT DEFAULT 'x'",)
    )
    store = Store(data_dir, migrations=(*MIGRATIONS, extra))
    try:
        assert store.schema_version == LATEST + 1
        assert store.query("PRAGMA user_version")[0][0] == LATEST + 1
        columns = [row["name"] for row in store.query("PRAGMA table_info(resources)")]
        assert "note" in columns
    finally:
        store.close()


def test_a_failing_migration_leaves_the_database_as_it_was(data_dir: Path) -> None:
    Store(data_dir).close()
    broken = Migration(LATEST + 1, "broken", ("CREATE TABLE fine (x)", "THIS IS NOT SQL"))
    with pytest.raises(sqlite3.OperationalError):
        Store(data_dir, migrations=(*MIGRATIONS, broken))
    store = Store(data_dir)
    try:
        assert store.schema_version == LATEST
        names = {row[0] for row in store.query("SELECT name FROM sqlite_master")}
        assert "fine" not in names
    finally:
        store.close()


def test_a_database_from_a_newer_backend_is_refused(data_dir: Path) -> None:
    Store(data_dir).close()
    conn = sqlite3.connect(data_dir / DATABASE_NAME)
    conn.execute(f"PRAGMA user_version = {LATEST + 5}")
    conn.close()
    with pytest.raises(InvalidState, match="newer acp-backend") as caught:
        Store(data_dir)
    assert caught.value.remedy is not None


def test_a_write_lock_held_too_long_is_a_clear_error(data_dir: Path) -> None:
    store = Store(data_dir, busy_timeout_ms=50)
    other = sqlite3.connect(data_dir / DATABASE_NAME, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        with pytest.raises(InvalidState, match="stayed locked"), store.write():
            pass
    finally:
        other.execute("ROLLBACK")
        other.close()
    with store.write() as conn:  # and the store is usable again
        conn.execute("DELETE FROM events")
    store.close()


def test_several_processes_opening_a_fresh_data_dir_at_once(data_dir: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from acp_backend.store import Store; "
        "s = Store(Path(sys.argv[1])); "
        "print(s.query('PRAGMA user_version')[0][0], s.query('PRAGMA journal_mode')[0][0])"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(data_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 4, outputs
    assert {out.strip() for out, _ in outputs} == {f"{LATEST} wal"}


def test_opening_waits_while_another_process_holds_a_fresh_database(data_dir: Path) -> None:
    """Switching to WAL needs an exclusive lock that SQLite does not wait for
    by itself: the store must wait (up to its busy timeout), not fail."""
    data_dir.mkdir(parents=True, exist_ok=True)
    other = sqlite3.connect(data_dir / DATABASE_NAME, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE placeholder (x)")  # a fresh, non-WAL database
    other.execute("BEGIN IMMEDIATE")  # mid-write, as another process migrating it
    releaser = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    releaser.start()
    try:
        store = Store(data_dir, busy_timeout_ms=5000)
    finally:
        releaser.join()
        other.close()
    assert store.query("PRAGMA journal_mode")[0][0] == "wal"
    store.close()


# --- validation results ------------------------------------------------------


@pytest.fixture
def resource_id(registry: Registry, workspace: Path) -> str:
    return registry.register(str(workspace)).id


def test_a_stored_result_reads_back_equal(store: Store, resource_id: str) -> None:
    result = factories.result("ruff", resource=resource_id)
    store.insert_result(result)
    assert store.latest_results(resource_id) == ([result], None)


def test_a_result_is_parsed_once_and_a_large_one_each_read(
    store: Store, resource_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored results are never changed, so a read parses each once; within
    ``PARSED_FINDINGS`` findings, the oldest read first left out."""
    monkeypatch.setattr(store_module, "PARSED_FINDINGS", 10)
    small = factories.result("ruff", findings=[factories.finding("a.py", 1)], resource=resource_id)
    large = factories.result(
        "mypy", findings=[factories.finding("a.py", n) for n in range(20)], resource=resource_id
    )
    store.insert_result(small)
    store.insert_result(large)
    first, _ = store.latest_results(resource_id)
    again, _ = store.latest_results(resource_id)
    assert first == again == [small, large]
    assert again[0] is first[0]  # kept
    assert again[1] is not first[1]  # over the budget: parsed each time
    assert store.result(small.id) is first[0]
    others = [
        factories.result(f"v{n}", findings=[factories.finding("a.py", n)], resource=resource_id)
        for n in range(6)
    ]
    for other in others:
        store.insert_result(other)
        assert store.result(other.id) == other
    assert store.result(small.id) is not first[0]  # pushed out by newer reads
    assert store.result(small.id) == small


def test_latest_results_keep_the_newest_per_validation(store: Store, resource_id: str) -> None:
    old_ruff = factories.result("ruff", resource=resource_id)
    mypy = factories.result("mypy", passed=True, resource=resource_id)
    new_ruff = factories.result("ruff", passed=True, resource=resource_id)
    for result in (old_ruff, mypy, new_ruff):
        store.insert_result(result)
    latest, cursor = store.latest_results(resource_id)
    assert latest == [mypy, new_ruff]
    assert cursor is None
    history, _ = store.latest_results(resource_id, history=True)
    assert history == [old_ruff, mypy, new_ruff]


def test_plan_results_are_kept_apart_from_the_resources_own(store: Store, resource_id: str) -> None:
    own = factories.result("ruff", passed=True, resource=resource_id)
    planned = factories.result("ruff", passed=True, resource=resource_id, plan_id="PLAN")
    store.insert_result(own)
    store.insert_result(planned)
    assert store.latest_results(resource_id)[0] == [own]
    assert store.latest_results(resource_id, plan_id="PLAN")[0] == [planned]


def test_pages_follow_the_cursor_without_gaps_or_repeats(store: Store, resource_id: str) -> None:
    results = [factories.result(f"check-{i}", passed=True, resource=resource_id) for i in range(7)]
    for result in results:
        store.insert_result(result)
    seen: list[ValidationResult] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = store.latest_results(resource_id, after=cursor, limit=3)
        seen.extend(page)
        pages += 1
        if cursor is None:
            break
    assert seen == results
    assert pages == 3


def test_a_bad_cursor_is_invalid_params(store: Store, resource_id: str) -> None:
    with pytest.raises(InvalidParams, match=r"params\.after"):
        store.latest_results(resource_id, after="page-2")


def test_a_result_for_an_unknown_resource_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.insert_result(factories.result("ruff", passed=True, resource="NO-SUCH-RESOURCE"))
    assert store.query("SELECT count(*) FROM validation_results")[0][0] == 0


def test_unregistering_a_resource_deletes_its_results(
    store: Store, registry: Registry, resource_id: str
) -> None:
    store.insert_result(factories.result("ruff", passed=True, resource=resource_id))
    registry.unregister(resource_id)
    assert store.query("SELECT count(*) FROM validation_results")[0][0] == 0
