"""Cancel and supersede while validators are still starting: nothing survives.

The validators are ``sh -c`` scripts that fork, as real ones do. Each writes
its process group id (``$$``: the shell leads its group) so the test can
check, by group, that nothing of it is alive afterwards. A busy event loop
(``time.sleep`` inside a coroutine) holds a freshly spawned command in the
window between its fork and asyncio's "started", where a cancel used to
kill the shell alone, leave its children running and wait on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acp_backend.facade import BackendFacade, create_facade
from acp_backend.validation.runner import run_command
from acp_client.events import ValidationCompleted, ValidationResultEvent
from acp_client.models import ResultOutcome, ValidationResult
from acp_client.operations import ValidationRunResult
from tests.support.validation import group_ends, running_in_group
from tests.support.waiting import until

# Forks a long sleeper and waits on it, unless the file ``quick`` exists.
FORKING = 'echo $$ >> "{pids}"; [ -e "{quick}" ] && exit 0; sleep 30 & sleep 30; wait'
BUSY_LOOP = 0.2  # long enough for the shell to fork before the cancel lands


def busy_loop() -> None:
    """Hold the event loop, as a burst of editor requests does."""
    time.sleep(BUSY_LOOP)


def groups(pids: Path) -> list[int]:
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


def alive(pgids: list[int]) -> list[int]:
    return [pid for pgid in pgids for pid in running_in_group(pgid)]


def kill_groups(pgids: list[int]) -> None:
    """Cleanup when a test failed: never leave its sleepers behind."""
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


async def test_cancel_while_the_command_starts_ends_its_whole_group(tmp_path: Path) -> None:
    pids, quick = tmp_path / "pids", tmp_path / "quick"
    script = FORKING.format(pids=pids, quick=quick)
    task = asyncio.create_task(run_command(("sh", "-c", script), cwd=tmp_path, time_limit=60))
    await asyncio.sleep(0)  # forked; its pipes are not connected yet
    busy_loop()
    try:
        (pgid,) = groups(pids)
        assert len(running_in_group(pgid)) >= 2, "the shell should have forked by now"
        task.cancel()
        started = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            async with asyncio.timeout(10):
                await task
        assert time.monotonic() - started < 5, "the cancel waited for the command's children"
        await group_ends(pgid)  # a SIGKILLed process is listed a moment longer
    finally:
        kill_groups(groups(pids))


@pytest.fixture
async def facade(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[BackendFacade]:
    monkeypatch.setenv("ACP_VALIDATION_CONCURRENCY", "2")
    backend = create_facade(tmp_path / "data")
    yield backend
    await backend.aclose()


def write_project(root: Path, script: str) -> None:
    root.mkdir()
    (root / "acp.toml").write_text(
        f'[[validations]]\nname = "lint"\nmode = "required"\ncommand = ["sh", "-c", {script!r}]\n',
        encoding="utf-8",
    )


async def declare(facade: BackendFacade, root: Path, script: str) -> None:
    write_project(root, script)
    await facade.dispatch("resource.register", {"path": str(root), "name": "proj"})


async def run(facade: BackendFacade) -> str:
    raw = await facade.dispatch("validation.run", {"resource": "proj"})
    return ValidationRunResult.model_validate(raw).run_id


async def outcomes(
    facade: BackendFacade, run_ids: list[str], after: int
) -> dict[str, list[ValidationResult]]:
    """Each run's results, once every run has completed."""
    results: dict[str, list[ValidationResult]] = {run_id: [] for run_id in run_ids}
    pending = set(run_ids)
    async for raw in facade.subscribe(after):
        params = raw["params"]
        if raw["method"] == ValidationResultEvent.method:
            result = ValidationResultEvent.model_validate(params).result
            results[result.run_id].append(result)
        elif raw["method"] == ValidationCompleted.method:
            pending.discard(params["run_id"])
            if not pending:
                return results
    raise AssertionError("the event stream ended")


async def test_save_all_supersedes_runs_that_are_still_starting(
    facade: BackendFacade, tmp_path: Path
) -> None:
    """Five saves in a row, the loop busy between them (as an editor's "save
    all" makes it): each run supersedes the previous one mid-spawn."""
    pids, quick = tmp_path / "pids", tmp_path / "quick"
    await declare(facade, tmp_path / "proj", FORKING.format(pids=pids, quick=quick))
    after = facade.services.events.last_id()
    run_ids = []
    try:
        for _ in range(4):
            run_ids.append(await run(facade))
            await asyncio.sleep(0)
            busy_loop()
        quick.touch()
        run_ids.append(await run(facade))
        started = time.monotonic()
        async with asyncio.timeout(15):
            results = await outcomes(facade, run_ids, after)
        assert time.monotonic() - started < 10
        assert [r.outcome for run_id in run_ids[:-1] for r in results[run_id]] == [
            ResultOutcome.CANCELLED
        ] * 4
        (last,) = results[run_ids[-1]]
        assert last.outcome is ResultOutcome.COMPLETED and last.passed
        await until(lambda: alive(groups(pids)) == [], seconds=5)
    finally:
        kill_groups(groups(pids))


async def test_of_fifty_concurrent_runs_only_the_newest_runs(
    facade: BackendFacade, tmp_path: Path
) -> None:
    pids, quick = tmp_path / "pids", tmp_path / "quick"
    await declare(facade, tmp_path / "proj", FORKING.format(pids=pids, quick=quick))
    after = facade.services.events.last_id()
    try:
        run_ids = list(await asyncio.gather(*(run(facade) for _ in range(49))))
        await asyncio.sleep(0)
        busy_loop()
        quick.touch()
        run_ids.append(await run(facade))
        async with asyncio.timeout(15):
            results = await outcomes(facade, run_ids, after)
        superseded = [r for run_id in run_ids[:-1] for r in results[run_id]]
        assert {r.outcome for r in superseded} == {ResultOutcome.CANCELLED}
        assert len(superseded) == 49
        # At most the two that held a concurrency slot ever started a process.
        assert len(groups(pids)) <= 3
        assert results[run_ids[-1]][0].outcome is ResultOutcome.COMPLETED
        await until(lambda: alive(groups(pids)) == [], seconds=5)
        # No slot leaked: a validation still runs, and at once.
        after = facade.services.events.last_id()
        async with asyncio.timeout(10):
            again = await run(facade)
            assert (await outcomes(facade, [again], after))[again][0].passed
    finally:
        kill_groups(groups(pids))
