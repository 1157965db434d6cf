"""Validation runs through the real facade, with real validator processes:
completion order, the concurrency bound, cancel, timeout, supersede, acp.toml
errors, results listing."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp_backend.facade import BackendFacade, create_facade
from acp_client.errors import AlreadyExists, InvalidParams, InvalidState, NotFound, OutsideRoot
from acp_client.events import ValidationCompleted, ValidationResultEvent, ValidationStarted
from acp_client.models import ResultOutcome, ValidationResult
from acp_client.operations import (
    ValidationCancelResult,
    ValidationListResult,
    ValidationListResultsResult,
    ValidationRunResult,
)
from tests.support.validation import HANGING_VALIDATOR, group_ends, read_pids, running_in_group
from tests.support.waiting import until

PYTHON = sys.executable


def validator(name: str, mode: str, script: str, **settings: str) -> str:
    """A ``[[validations]]`` table running a Python one-liner with this interpreter."""
    lines = [
        "[[validations]]",
        f'name = "{name}"',
        f'mode = "{mode}"',
        f"command = [{PYTHON!r}, '-c', {script!r}]",
        *(f"{key} = {value}" for key, value in settings.items()),
    ]
    return "\n".join(lines) + "\n\n"


def sleeper(seconds: float, *, output: str = "", status: int = 0) -> str:
    return f"import sys, time; time.sleep({seconds}); print({output!r}, end=''); sys.exit({status})"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    (root / "hang.py").write_text(HANGING_VALIDATOR, encoding="utf-8")
    return root


@pytest.fixture
async def facade(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[BackendFacade]:
    monkeypatch.setenv("ACP_VALIDATION_CONCURRENCY", "4")
    backend = create_facade(tmp_path / "data")
    yield backend
    await backend.aclose()


async def declare(facade: BackendFacade, project: Path, toml: str) -> None:
    (project / "acp.toml").write_text(toml, encoding="utf-8")
    with contextlib.suppress(AlreadyExists):  # registered by an earlier declare
        await facade.dispatch("resource.register", {"path": str(project), "name": "proj"})


async def start(facade: BackendFacade, **params: Any) -> ValidationRunResult:
    raw = await facade.dispatch("validation.run", {"resource": "proj", **params})
    return ValidationRunResult.model_validate(raw)


async def events_of(facade: BackendFacade, run: ValidationRunResult) -> list[Any]:
    """The run's events, from its start to its completion."""
    assert run.started_event_id is not None
    seen: list[Any] = []
    async for message in facade.subscribe(run.started_event_id - 1):
        event = {
            "validation.started": ValidationStarted,
            "validation.result": ValidationResultEvent,
            "validation.completed": ValidationCompleted,
        }.get(message["method"])
        if event is None:
            continue
        parsed = event.model_validate(message["params"])
        if getattr(parsed, "run_id", None) == run.run_id or (
            isinstance(parsed, ValidationResultEvent) and parsed.result.run_id == run.run_id
        ):
            seen.append(parsed)
        if isinstance(parsed, ValidationCompleted) and parsed.run_id == run.run_id:
            return seen
    raise AssertionError("the event stream ended before the run completed")


def results_in(events: list[Any]) -> list[ValidationResult]:
    return [event.result for event in events if isinstance(event, ValidationResultEvent)]


async def test_results_arrive_in_completion_order_with_a_summary(
    facade: BackendFacade, project: Path
) -> None:
    gnu = "app.py:2:1: error: y is suspicious [y1]"
    await declare(
        facade,
        project,
        validator("slow", "required", sleeper(2.5))  # well apart, even under load
        + validator("medium", "informational", sleeper(0.6, output=gnu), format='"pattern"')
        + validator("fast", "required", sleeper(0, status=4)),
    )
    run = await start(facade)
    assert run.validations == ("slow", "medium", "fast")
    events = await events_of(facade, run)
    assert isinstance(events[0], ValidationStarted) and events[0].validations == run.validations
    assert [r.validation for r in results_in(events)] == ["fast", "medium", "slow"]
    fast, medium, slow = results_in(events)
    assert not fast.passed and fast.outcome is ResultOutcome.COMPLETED
    assert fast.message.startswith("exit status 4")
    assert not medium.passed and medium.findings[0].location is not None
    assert (medium.findings[0].location.path, medium.findings[0].location.line) == ("app.py", 1)
    assert medium.file_hashes.keys() == {"app.py"}
    assert slow.passed and slow.message == "exit status 0"
    assert slow.declared_at is not None and slow.declared_at.line == 0
    completed = events[-1]
    assert isinstance(completed, ValidationCompleted)
    assert completed.summary.model_dump() == {
        "required_passed": 1,
        "required_failed": 1,
        "informational_passed": 0,
        "informational_failed": 1,
        "cancelled": 0,
    }


async def test_validators_never_exceed_the_concurrency_setting(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_VALIDATION_CONCURRENCY", "1")
    backend = create_facade(tmp_path / "serial")
    try:
        await declare(
            backend,
            project,
            validator("a", "required", sleeper(0.4)) + validator("b", "required", sleeper(0.4)),
        )
        first, second = sorted(
            results_in(await events_of(backend, await start(backend))),
            key=lambda result: result.started_at,
        )
        assert second.started_at >= first.finished_at
    finally:
        await backend.aclose()


async def hanging_run(facade: BackendFacade, project: Path, **settings: str) -> tuple[Any, int]:
    """Start the hanging validator; returns the run and its process group once it runs."""
    pids = project / "pids"
    pids.unlink(missing_ok=True)
    script = f"import runpy, sys; sys.argv = ['hang', {str(pids)!r}]; runpy.run_path('hang.py')"
    await declare(facade, project, validator("hang", "required", script, **settings))
    run = await start(facade)
    await until(pids.exists, 30)
    leader, child = read_pids(pids)
    assert set(running_in_group(leader)) == {leader, child}
    return run, leader


async def test_cancel_kills_every_process_and_records_the_result_as_cancelled(
    facade: BackendFacade, project: Path
) -> None:
    run, group = await hanging_run(facade, project)
    raw = await facade.dispatch("validation.cancel", {"run_id": run.run_id})
    assert ValidationCancelResult.model_validate(raw).cancelled == ("hang",)
    await group_ends(group)
    events = await events_of(facade, run)
    (result,) = results_in(events)
    assert result.outcome is ResultOutcome.CANCELLED and not result.passed
    assert result.message == "cancelled by request"
    assert events[-1].summary.cancelled == 1 and events[-1].summary.required_failed == 0
    # Cancelling a run that is over changes nothing; an unknown run is not found.
    again = await facade.dispatch("validation.cancel", {"run_id": run.run_id})
    assert again["cancelled"] == []
    with pytest.raises(NotFound):
        await facade.dispatch("validation.cancel", {"run_id": "01M8N0EPRR8A70EZFX9AZAB5KR"})


async def test_a_timeout_kills_every_process_and_fails_saying_so(
    facade: BackendFacade, project: Path
) -> None:
    run, group = await hanging_run(facade, project, timeout="1")
    (result,) = results_in(await events_of(facade, run))
    assert result.outcome is ResultOutcome.TIMED_OUT and not result.passed
    assert result.message == "timed out after 1 s; its processes were killed"
    await group_ends(group)


async def test_a_new_run_supersedes_the_same_validation_still_running(
    facade: BackendFacade, project: Path
) -> None:
    first, first_group = await hanging_run(facade, project)
    second, second_group = await hanging_run(facade, project)
    (superseded,) = results_in(await events_of(facade, first))
    assert superseded.outcome is ResultOutcome.CANCELLED
    assert superseded.message == f"superseded by run {second.run_id}"
    await group_ends(first_group)
    assert running_in_group(second_group) != []  # the new one carries on
    await facade.dispatch("validation.cancel", {"run_id": second.run_id})
    await group_ends(second_group)


async def test_a_missing_executable_fails_naming_it(facade: BackendFacade, project: Path) -> None:
    await declare(
        facade,
        project,
        '[[validations]]\nname = "lint"\nmode = "required"\ncommand = ["no-such-linter-x", "."]\n',
    )
    (result,) = results_in(await events_of(facade, await start(facade)))
    assert result.outcome is ResultOutcome.ERROR and not result.passed
    assert result.message == "executable not found: no-such-linter-x"


async def test_a_validator_printing_invalid_utf8(facade: BackendFacade, project: Path) -> None:
    script = (
        "import sys; sys.stdout.buffer.write(b'app.py:1:1: error: caf\\xe9 \\xff\\n'); sys.exit(1)"
    )
    await declare(facade, project, validator("bytes", "required", script, format='"pattern"'))
    (result,) = results_in(await events_of(facade, await start(facade)))
    assert result.outcome is ResultOutcome.COMPLETED
    assert [f.message for f in result.findings] == ["caf\ufffd \ufffd"]


async def test_unparseable_output_is_an_error_result(facade: BackendFacade, project: Path) -> None:
    script = "print('Traceback: the linter crashed'); raise SystemExit(2)"
    await declare(facade, project, validator("broken", "required", script, format='"sarif"'))
    (result,) = results_in(await events_of(facade, await start(facade)))
    assert result.outcome is ResultOutcome.ERROR
    assert result.message.startswith("output is not SARIF JSON")
    assert "the linter crashed" in result.message


async def test_a_broken_acp_toml_keeps_the_last_valid_declarations(
    facade: BackendFacade, project: Path
) -> None:
    await declare(facade, project, validator("ok", "required", sleeper(0)))
    listed = ValidationListResult.model_validate(
        await facade.dispatch("validation.list", {"resource": "proj"})
    )
    assert [v.name for v in listed.validations] == ["ok"] and listed.config_error is None
    broken = validator("ok", "required", sleeper(0)) + '[[validations]]\nname = "x"\nmode = 3\n'
    (project / "acp.toml").write_text(broken, encoding="utf-8")
    os.utime(project / "acp.toml", ns=(1, 1))  # a different mtime, whatever the clock
    listed = ValidationListResult.model_validate(
        await facade.dispatch("validation.list", {"resource": "proj"})
    )
    assert [v.name for v in listed.validations] == ["ok"]
    error = listed.config_error
    assert error is not None and error.location is not None
    assert (error.location.path, error.location.line) == ("acp.toml", 7)
    assert error.message.endswith(
        "acp.toml:8: validations[2].mode: Input should be 'required' or 'informational'"
    )
    run = await start(facade)
    assert run.validations == ("ok",)  # the previous declarations still run
    await events_of(facade, run)


async def test_a_file_broken_from_the_start_refuses_to_run_naming_the_problem(
    facade: BackendFacade, project: Path
) -> None:
    await declare(facade, project, '[[validations]]\nname = "x"\nmode = "required"\n')
    with pytest.raises(InvalidState, match=r"acp.toml:1: validations\[1\].command: required"):
        await start(facade)
    (project / "acp.toml").unlink()
    with pytest.raises(InvalidState, match="declares no validations"):
        await start(facade)


async def test_run_parameters_are_checked(facade: BackendFacade, project: Path) -> None:
    await declare(
        facade,
        project,
        validator("py", "required", sleeper(0), applies_to='["*.py"]')
        + validator("docs", "informational", sleeper(0), applies_to='["docs/**"]'),
    )
    with pytest.raises(InvalidParams, match="no validation named 'nope'; declared: docs, py"):
        await start(facade, validations=["nope"])
    with pytest.raises(OutsideRoot):
        await start(facade, paths=["/etc/passwd"])
    with pytest.raises(NotFound, match="no plan"):  # a plan's sandbox: only a known plan's
        await start(facade, plan="01M8N0EPRR8A70EZFX9AZAB5KR")
    by_path = await start(facade, paths=[str(project / "app.py"), "docs/guide/intro.md"])
    assert by_path.validations == ("py", "docs")
    only_docs = await start(facade, paths=["docs/x.md"])
    assert only_docs.validations == ("docs",)
    nothing = await start(facade, paths=["README"])
    assert nothing.validations == ()
    assert (await events_of(facade, nothing))[-1].summary.required_passed == 0


async def test_list_results_gives_the_latest_per_validation_and_pages_history(
    facade: BackendFacade, project: Path
) -> None:
    await declare(
        facade,
        project,
        validator("a", "required", sleeper(0)) + validator("b", "informational", sleeper(0)),
    )
    first = await start(facade)
    await events_of(facade, first)
    second = await start(facade)
    await events_of(facade, second)

    async def listed(**params: Any) -> ValidationListResultsResult:
        raw = await facade.dispatch("validation.list_results", {"resource": "proj", **params})
        return ValidationListResultsResult.model_validate(raw)

    latest = await listed()
    assert sorted(r.validation for r in latest.results) == ["a", "b"]
    assert {r.run_id for r in latest.results} == {second.run_id}
    history: list[ValidationResult] = []
    cursor = None
    while True:
        page = await listed(history=True, limit=1, **({"after": cursor} if cursor else {}))
        history.extend(page.results)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(history) == 4 and len({r.id for r in history}) == 4
    assert [r.run_id for r in history].count(first.run_id) == 2


async def test_a_backend_shutting_down_kills_its_validators_and_records_why(
    tmp_path: Path, project: Path
) -> None:
    backend = create_facade(tmp_path / "data")
    run, group = await hanging_run(backend, project)
    await backend.aclose()
    await group_ends(group)
    reopened = create_facade(tmp_path / "data")
    try:
        raw = await reopened.dispatch("validation.list_results", {"resource": "proj"})
        (result,) = ValidationListResultsResult.model_validate(raw).results
        assert (result.run_id, result.outcome) == (run.run_id, ResultOutcome.CANCELLED)
        assert result.message == "the backend shut down"
    finally:
        await reopened.aclose()
