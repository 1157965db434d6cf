"""A line's history from git: the last commit, uncommitted lines, caching, and
no history (never an error, never a stall) without a work tree, without git,
or with a git that hangs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from acp_backend.inspect import history as history_module
from acp_backend.inspect.history import (
    BLAME_TIME_LIMIT,
    History,
    head_commit,
    parse_porcelain,
    work_tree,
)
from acp_client.models import LineHistory
from tests.support.git import AUTHOR, committed, git, hanging_git

TEXT = "def greet(name):\n    return f'hi {name}'\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(TEXT)
    committed(root, "Greet people\n\nA longer body.")
    return root


async def test_the_commit_that_last_changed_the_line(repo: Path) -> None:
    (repo / "src" / "app.py").write_text(TEXT.replace("hi", "hello"))
    second = committed(repo, "Say hello instead")
    found = await History().line(str(repo / "src" / "app.py"), TEXT.replace("hi", "hello"), "a", 1)
    assert found is not None
    assert (found.commit, found.author, found.subject) == (second, AUTHOR, "Say hello instead")
    assert found.authored_at == datetime(2026, 11, 30, 8, 15, tzinfo=UTC)
    assert found.authored_at.utcoffset() == timedelta(hours=1)
    first = await History().line(str(repo / "src" / "app.py"), TEXT.replace("hi", "hello"), "a", 0)
    assert first is not None and first.subject == "Greet people" and first.commit != second


async def test_a_line_of_the_unsaved_text_that_differs_is_not_committed(repo: Path) -> None:
    buffer = "# new first line\n" + TEXT
    history = History()
    assert await history.line(str(repo / "src" / "app.py"), buffer, "b", 0) == LineHistory()
    moved = await history.line(str(repo / "src" / "app.py"), buffer, "b", 2)
    assert moved is not None and moved.subject == "Greet people"  # it followed the edit


async def test_answers_are_cached_per_head_content_and_line(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = History()
    calls: list[int] = []
    real = History._blame

    async def counting(self: History, *args: object) -> object:
        calls.append(1)
        return await real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(History, "_blame", counting)
    path = str(repo / "src" / "app.py")
    for _ in range(3):
        assert await history.line(path, TEXT, "c", 0) is not None
    assert len(calls) == 1
    await history.line(path, TEXT, "other content", 0)
    assert len(calls) == 2
    (repo / "src" / "app.py").write_text(TEXT + "# more\n")
    committed(repo, "More")  # HEAD moved
    await history.line(path, TEXT, "c", 0)
    assert len(calls) == 3


async def test_renamed_files_name_their_path_in_the_commit(repo: Path) -> None:
    git(repo, "mv", "src/app.py", "src/greetings.py")
    committed(repo, "Rename")
    found = await History().line(str(repo / "src" / "greetings.py"), TEXT, "d", 0)
    assert found is not None and found.subject == "Greet people"
    assert found.path == "src/app.py"


async def test_no_work_tree_no_git_or_an_untracked_file_is_no_history(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loose = tmp_path / "loose" / "x.py"
    loose.parent.mkdir()
    loose.write_text(TEXT)
    assert await History().line(str(loose), TEXT, "e", 0) is None
    (repo / "new.py").write_text(TEXT)
    assert await History().line(str(repo / "new.py"), TEXT, "e", 0) is None
    assert await History().line(str(repo / "src" / "app.py"), TEXT, "e", 99) is None
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert await History().line(str(repo / "src" / "app.py"), TEXT, "e", 0) is None


async def test_a_git_that_hangs_is_killed_in_time_and_not_asked_again(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = hanging_git(tmp_path / "bin", seconds=47.31)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    history = History()
    started = time.monotonic()
    assert await history.line(str(repo / "src" / "app.py"), TEXT, "f", 0) is None
    elapsed = time.monotonic() - started
    assert BLAME_TIME_LIMIT <= elapsed < BLAME_TIME_LIMIT + 1.0
    started = time.monotonic()
    assert await history.line(str(repo / "src" / "app.py"), TEXT, "f", 1) is None
    assert time.monotonic() - started < 0.2  # backing off
    assert not running("sleep 47.31")  # its whole process group was killed
    monkeypatch.setattr(history_module, "HUNG_BACKOFF", 0.0)
    assert await History().line(str(repo / "src" / "app.py"), TEXT, "f", 0) is None


def running(command: str) -> bool:
    for entry in Path("/proc").iterdir():
        try:
            if (entry / "cmdline").read_bytes().replace(b"\0", b" ").strip() == command.encode():
                return True
        except OSError:
            continue
    return False


def test_head_is_read_from_the_files(repo: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    assert head_commit(str(repo / ".git")) == head
    git(repo, "pack-refs", "--all")
    assert head_commit(str(repo / ".git")) == head
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")
    assert work_tree(str(tmp_path / "linked" / "src" / "app.py")) == (
        str(tmp_path / "linked"),
        str(tmp_path / "linked" / ".git"),
    )
    assert head_commit(str(tmp_path / "linked" / ".git")) == head
    git(repo, "checkout", "-q", "--detach")
    assert head_commit(str(repo / ".git")) == head
    assert head_commit(str(tmp_path / "nothing")) is None


def test_porcelain_output_and_odd_input() -> None:
    sha = "a" * 40
    output = (
        f"{sha} 3 3 1\nauthor Grace\nauthor-mail <g@x>\nauthor-time 1700000000\n"
        "author-tz -0500\nsummary Fix it\nfilename old.py\n\tcode\n"
    )
    found = parse_porcelain(output)
    assert found is not None and (found.commit, found.author, found.subject) == (
        sha,
        "Grace",
        "Fix it",
    )
    assert found.authored_at == datetime.fromtimestamp(1700000000, timezone(timedelta(hours=-5)))
    assert parse_porcelain(f"{'0' * 40} 1 1 1\nauthor External file (--contents)\n") == (
        LineHistory()
    )
    assert parse_porcelain("") is None and parse_porcelain("garbage") is None
    odd = parse_porcelain(f"{sha} 1 1 1\nauthor-time soon\nauthor-tz +9\n")
    assert odd is not None and odd.authored_at is None


SHUTDOWN = """
import asyncio, sys
from acp_backend.inspect.history import History

async def main():
    history = History()
    for _ in range(5):  # blames starting when the loop ends
        asyncio.ensure_future(history.line(sys.argv[1], "x = 1\\n", "sha", 0))
    await asyncio.sleep(0)

asyncio.run(main())  # cancels every task, as the server's shutdown does
print("exited")
"""


def test_a_loop_that_ends_while_blames_start_still_ends(repo: Path, tmp_path: Path) -> None:
    """An editor that quit during a hover left the server unable to exit:
    on Python 3.11 a task cancelled while ``create_subprocess_exec`` starts
    its process waits for ever, and ``asyncio.run`` waits for that task."""
    script = tmp_path / "shutdown.py"
    script.write_text(SHUTDOWN, encoding="utf-8")
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, str(script), str(repo / "src" / "app.py")],
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.stdout.strip() == "exited", done.stderr
