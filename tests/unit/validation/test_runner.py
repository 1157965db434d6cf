"""Running a validator's command for real: exits, output, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from acp_backend.validation.runner import Ending, run_command, validator_environment
from tests.support.validation import HANGING_VALIDATOR, group_ends, read_pids, running_in_group
from tests.support.waiting import until

PYTHON = sys.executable


async def test_output_and_exit_status_of_a_command(tmp_path: Path) -> None:
    outcome = await run_command(
        (PYTHON, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"),
        cwd=tmp_path,
        time_limit=30,
    )
    assert (outcome.ending, outcome.status) == (Ending.EXITED, 3)
    assert (outcome.stdout, outcome.stderr) == ("out\n", "err\n")


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "thread"])
async def test_the_exit_is_seen_with_or_without_a_pidfd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pidfd: bool
) -> None:
    """Where the platform has no pidfd, a thread waits for the exit instead;
    with one, no thread is started at all."""
    from acp_backend.validation import runner

    started: list[str] = []
    real_start = runner.threading.Thread.start

    def start(thread: runner.threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(runner.threading.Thread, "start", start)
    if not pidfd:
        monkeypatch.setattr(runner, "_pidfd", lambda pid: None)
    elif runner._pidfd(os.getpid()) is None:
        pytest.skip("no pidfd on this platform")
    outcome = await run_command((PYTHON, "-c", "print('x')"), cwd=tmp_path, time_limit=30)
    assert (outcome.ending, outcome.stdout) == (Ending.EXITED, "x\n")
    waiters = [name for name in started if name.startswith("validator")]
    assert len(waiters) == (0 if pidfd else 1)


async def test_a_command_runs_in_the_resource_root(tmp_path: Path) -> None:
    outcome = await run_command(
        (PYTHON, "-c", "import os; print(os.getcwd())"), cwd=tmp_path, time_limit=30
    )
    assert outcome.stdout.strip() == str(tmp_path)


async def test_invalid_utf8_output_is_replaced_not_fatal(tmp_path: Path) -> None:
    script = "import sys; sys.stdout.buffer.write(b'caf\\xe9 \\xff\\xfe ok\\n')"
    outcome = await run_command((PYTHON, "-c", script), cwd=tmp_path, time_limit=30)
    assert outcome.ending is Ending.EXITED and outcome.stdout == "caf\ufffd \ufffd\ufffd ok\n"


async def test_a_missing_executable_is_named(tmp_path: Path) -> None:
    outcome = await run_command(("no-such-validator-tool", "--check"), cwd=tmp_path, time_limit=5)
    assert outcome.ending is Ending.NOT_STARTED
    assert outcome.error == "executable not found: no-such-validator-tool"


async def test_a_missing_working_directory_is_named(tmp_path: Path) -> None:
    outcome = await run_command(("true",), cwd=tmp_path / "gone", time_limit=5)
    assert outcome.ending is Ending.NOT_STARTED and "gone is missing" in outcome.error


async def test_a_shell_command_when_asked_for(tmp_path: Path) -> None:
    outcome = await run_command("echo one two | wc -w", shell=True, cwd=tmp_path, time_limit=30)
    assert outcome.stdout.strip() == "2"


async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = tmp_path / "hang.py"
    script.write_text(HANGING_VALIDATOR)
    started = time.monotonic()
    outcome = await run_command((PYTHON, str(script), str(pids)), cwd=tmp_path, time_limit=1.5)
    assert outcome.ending is Ending.TIMED_OUT
    assert time.monotonic() - started < 10
    leader, _child = read_pids(pids)
    await group_ends(leader)


async def test_cancelling_kills_the_whole_process_group_before_returning(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = tmp_path / "hang.py"
    script.write_text(HANGING_VALIDATOR)
    task = asyncio.create_task(
        run_command((PYTHON, str(script), str(pids)), cwd=tmp_path, time_limit=60)
    )
    await until(pids.exists, 30)
    leader, child = read_pids(pids)
    assert set(running_in_group(leader)) == {leader, child}
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await group_ends(leader)


async def test_what_a_command_leaves_running_is_killed_when_it_exits(tmp_path: Path) -> None:
    started = time.monotonic()
    outcome = await run_command(("sh", "-c", "sleep 60 & echo $$ $!"), cwd=tmp_path, time_limit=30)
    assert outcome.ending is Ending.EXITED and outcome.status == 0
    leader, _straggler = map(int, outcome.stdout.split())
    assert time.monotonic() - started < 10  # not held up by the straggler's open pipes
    await group_ends(leader)


async def test_output_beyond_the_cap_stops_the_command(tmp_path: Path) -> None:
    script = "import sys\nwhile True: sys.stdout.write('x' * 65536)"
    outcome = await run_command(
        (PYTHON, "-c", script), cwd=tmp_path, time_limit=30, output_cap=1024 * 1024
    )
    assert outcome.ending is Ending.OUTPUT_TOO_LARGE
    assert len(outcome.stdout) <= 1024 * 1024


def test_tools_beside_the_backend_are_on_the_validators_path() -> None:
    paths = validator_environment()["PATH"].split(os.pathsep)
    assert str(Path(sys.executable).parent) in paths


async def test_a_validator_never_sees_the_backends_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_TOKEN", "secret-token-value")
    monkeypatch.setenv("ACP_HARMLESS_SETTING", "kept")
    outcome = await run_command(("env",), cwd=tmp_path, time_limit=30)
    assert "ACP_HARMLESS_SETTING=kept" in outcome.stdout.splitlines()
    assert "secret-token-value" not in outcome.stdout
