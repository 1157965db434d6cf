"""A result is stored once (its event refers to it), results keep a bounded
history per validation, and event retention is bounded by bytes as well as
by count; subscribers still receive every result in full."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acp_backend.eventlog import EventLog
from acp_backend.registry import Registry
from acp_backend.store import DATABASE_NAME, MIGRATIONS, STREAMED_BODIES, Store, result_body
from acp_client.events import PlanApplied, ValidationResultEvent
from acp_client.models import Finding, Location, ValidationMode, ValidationResult
from tests.support import factories


def with_findings(result: ValidationResult, n: int) -> ValidationResult:
    findings = tuple(
        Finding(location=Location(path="a.py", line=i, character=0), message=f"finding {i}")
        for i in range(n)
    )
    return result.model_copy(update={"findings": findings})


async def replay(events: EventLog, after: int = 0) -> list[dict[str, Any]]:
    """Everything after ``after`` that is in the log now."""
    stream: AsyncIterator[dict[str, Any]] = events.subscribe(after)
    out: list[dict[str, Any]] = []
    last = events.last_id()
    async with asyncio.timeout(5):
        while not out or out[-1]["params"]["event_id"] < last:
            out.append(await anext(stream))
    return out


def run(store: Store, events: EventLog, resource_id: str, findings: int = 3) -> ValidationResult:
    """What a validation run records: the result and its event, together."""
    result = with_findings(factories.result("ruff", passed=True, resource=resource_id), findings)
    event = events.prepare(ValidationResultEvent, result=result)
    store.insert_result(result, event.write)
    event.announce()
    return result


async def test_a_result_and_its_event_commit_together_or_not_at_all(
    store: Store, events: EventLog, resource_id: str
) -> None:
    result = with_findings(factories.result("ruff", passed=True, resource=resource_id), 3)
    before = events.last_id()  # the resource's registration
    event = events.prepare(ValidationResultEvent, result=result)

    def then_the_disk_fails(conn: sqlite3.Connection) -> None:
        event.write(conn)
        raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(Exception, match="disk"):
        store.insert_result(result, then_the_disk_fails)
    assert store.result(result.id) is None
    assert store.query("SELECT id FROM events WHERE id > ?", (before,)) == []

    stream = events.subscribe()
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    event = events.prepare(ValidationResultEvent, result=result)
    store.insert_result(result, event.write)
    assert not waiting.done()  # committed, not yet announced
    announced = event.announce()
    delivered = await asyncio.wait_for(waiting, 5)
    assert delivered["params"]["event_id"] == announced.event_id == events.last_id()
    stored = store.result(result.id)
    assert stored is not None and delivered["params"]["result"]["id"] == stored.id
    (row,) = store.query("SELECT result_id FROM events WHERE id > ?", (before,))
    assert row["result_id"] == result.id  # the event refers to the stored result
    await stream.aclose()


@pytest.fixture
def resource_id(registry: Registry, workspace: Path) -> str:
    return registry.register(str(workspace)).id


async def test_a_stored_result_is_written_once_and_delivered_in_full(
    store: Store, events: EventLog, resource_id: str
) -> None:
    result = with_findings(factories.result("ruff", passed=True, resource=resource_id), 50)
    store.insert_result(result)
    published = events.publish(ValidationResultEvent, result=result)
    (row,) = store.query(
        "SELECT params, result_id, bytes FROM events WHERE method = ?", ("validation.result",)
    )
    assert row["result_id"] == result.id
    assert json.loads(row["params"])["result"] is None
    assert "finding 49" not in row["params"]
    assert row["bytes"] > len(result.model_dump_json(exclude_defaults=True))  # with its result
    (delivered,) = [n for n in await replay(events) if n["method"] == "validation.result"]
    assert delivered == published.to_notification()  # the wire format is unchanged
    assert list(delivered["params"]) == list(published.to_notification()["params"])


def test_a_stored_result_leaves_out_defaults_and_reads_back_whole(
    store: Store, resource_id: str
) -> None:
    result = with_findings(factories.result("ruff", passed=True, resource=resource_id), 3)
    store.insert_result(result)
    (row,) = store.query("SELECT body FROM validation_results WHERE id = ?", (result.id,))
    # A finding's unset fields were more than half of a result's bytes.
    assert "help_uri" not in row["body"] and "null" not in row["body"]
    assert ValidationResult.model_validate_json(row["body"]) == result


async def test_a_result_that_was_not_stored_travels_inside_its_event(
    events: EventLog, resource_id: str
) -> None:
    # never inserted (say the disk was full)
    result = factories.result("ruff", passed=True, resource=resource_id)
    published = events.publish(ValidationResultEvent, result=result)
    assert (await replay(events))[-1] == published.to_notification()


def test_results_keep_a_bounded_history_per_validation(
    data_dir: Path, registry: Registry, workspace: Path
) -> None:
    store = Store(data_dir, result_history=2)
    events = EventLog(store, retention=3)
    resource_id = Registry(store, events).register(str(workspace)).id
    for _ in range(15):
        run(store, events, resource_id)
    other = factories.result("mypy", passed=True, resource=resource_id)
    store.insert_result(other)
    # The two newest, plus one an event still refers to.
    assert len(store.query("SELECT id FROM validation_results WHERE validation = 'ruff'")) == 3
    for i in range(3):  # push the result events out of the log
        events.publish(PlanApplied, plan_id=f"P{i}", resource_id=resource_id, paths=())
    kept = store.query("SELECT id FROM validation_results WHERE validation = 'ruff' ORDER BY id")
    assert len(kept) == 2
    latest, _ = store.latest_results(resource_id)
    assert {r.validation for r in latest} == {"ruff", "mypy"}
    assert kept[-1]["id"] in {r.id for r in latest}
    store.close()


def test_event_retention_is_bounded_by_bytes_and_keeps_the_newest(store: Store) -> None:
    events = EventLog(store, retention=1_000, retention_bytes=20_000)
    for i in range(100):
        events.publish(PlanApplied, plan_id="P" * 900, resource_id=f"R{i}", paths=())
    sizes = [row["bytes"] for row in store.query("SELECT bytes FROM events")]
    assert 15_000 < sum(sizes) <= 20_000
    assert events.last_id() == 100
    huge = events.publish(PlanApplied, plan_id="P" * 50_000, resource_id="R", paths=())
    assert [row["id"] for row in store.query("SELECT id FROM events")] == [huge.event_id]


async def test_a_retention_gap_still_resets_the_stream(store: Store) -> None:
    events = EventLog(store, retention=1_000, retention_bytes=5_000)
    for i in range(30):
        events.publish(PlanApplied, plan_id="P" * 500, resource_id=f"R{i}", paths=())
    first = (await replay(events, after=1))[0]
    assert first["method"] == "stream.reset"


async def test_results_of_an_unregistered_resource_are_skipped_on_replay(
    store: Store, events: EventLog, registry: Registry, resource_id: str
) -> None:
    run(store, events, resource_id)
    registry.unregister(resource_id)
    methods = [n["method"] for n in await replay(events)]
    assert methods == ["resource.changed", "resource.changed"]


# The migration that made events refer to results (its number may change on merges).
RESULTS_ONCE = next(i for i, m in enumerate(MIGRATIONS) if "refers to its stored" in m.description)


async def test_the_migration_turns_stored_results_into_references(
    data_dir: Path, workspace: Path
) -> None:
    old = Store(data_dir, migrations=MIGRATIONS[:RESULTS_ONCE])
    resource_id = "R1"
    result = with_findings(factories.result("ruff", passed=True, resource=resource_id), 20)
    with old.write() as conn:  # as version 1 wrote it: the result twice
        conn.execute(f"INSERT INTO resources VALUES ('R1', 'r', '{workspace}', 't')")
        conn.execute(
            "INSERT INTO validation_results VALUES (?, ?, 'ruff', NULL, ?, ?, 0, 'required', ?)",
            (result.id, resource_id, result.run_id, "t", result.model_dump_json()),
        )
        full = ValidationResultEvent(event_id=0, at=result.finished_at, result=result)
        params = full.model_dump(mode="json", exclude={"event_id"})
        conn.execute(
            "INSERT INTO events (method, params, at) VALUES ('validation.result', ?, 't')",
            (json.dumps(params),),
        )
    old.close()
    store = Store(data_dir)
    (row,) = store.query("SELECT params, result_id FROM events WHERE result_id IS NOT NULL")
    assert row["result_id"] == result.id and json.loads(row["params"])["result"] is None
    delivered = (await replay(EventLog(store)))[-1]
    assert delivered["params"]["result"] == result.model_dump(mode="json")
    uptos = [r[0] for r in store.query("SELECT upto FROM events ORDER BY id")]
    assert uptos == sorted(uptos) and uptos[0] > 0
    store.close()
    assert sqlite3.connect(data_dir / DATABASE_NAME).execute("PRAGMA user_version").fetchone()[
        0
    ] == len(MIGRATIONS)


def test_a_stored_body_is_the_result_s_json_without_defaults_written_in_parts() -> None:
    """``result_body`` writes findings 500 at a time (no long GIL hold) and
    says exactly what one ``model_dump_json(exclude_defaults=True)`` says."""
    findings = tuple(
        Finding(
            location=Location(path=f"m{n}.py", line=n % 7, character=n % 3),
            message=f"finding {n}",
            code="X1" if n % 2 else None,
        )
        for n in range(1234)
    )
    for kept in (findings, ()):
        result = ValidationResult(
            id="01J0000000000000000000000A",
            validation="lint",
            mode=ValidationMode.REQUIRED,
            passed=not kept,
            resource_id="r",
            run_id="run",
            started_at=datetime(2026, 1, 1, tzinfo=UTC),
            finished_at=datetime(2026, 1, 1, tzinfo=UTC),
            findings=kept,
            file_hashes={"m1.py": "0" * 64},
        )
        whole = result.model_dump_json(exclude_defaults=True)
        assert json.loads(result_body(result)) == json.loads(whole)
        assert len(result_body(result)) == len(whole)


def test_a_store_keeps_the_json_of_its_last_results_only_once_a_stream_asks(
    store: Store, events: EventLog, resource_id: str
) -> None:
    before = run(store, events, resource_id)
    body_of = store.stream_bodies()  # what ``acp-backend serve`` asks at its start
    assert body_of(before) is None  # stored before: nothing was kept for it
    results = [run(store, events, resource_id) for _ in range(STREAMED_BODIES + 1)]
    assert body_of(results[0]) is None  # pushed out by the newer ones
    for result in results[1:]:
        assert body_of(result) == result_body(result)
    assert body_of(results[-1].model_copy()) is None  # that very object, not an equal one
