"""The parse server's lifetime, as its backend's end sees it (real processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_backend.validation.fork_server import ForkServer

ROOT = Path(__file__).resolve().parents[3]
PROBE = Path(__file__).with_name("parse_server_probe.py")
ON_PROC = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")


def test_the_parse_server_ends_by_itself_when_its_backend_does() -> None:
    """It shares the backend's stderr: until it ends, whoever reads the
    backend's output (a CI log, ``acp-lsp check | tee``) keeps waiting."""
    server = ForkServer()
    server.connect().close()  # started, and far enough to have forked a child
    process = server._process
    assert process is not None and server._socket is not None
    server._socket.close()  # what the backend's exit does to it
    try:
        assert process.wait(timeout=30) == 0  # its own exit, not a kill
    finally:
        if process.poll() is None:
            process.kill()


def test_a_warmed_up_server_is_the_one_used() -> None:
    server = ForkServer()
    server.warm_up()
    try:
        server.connect().close()  # waits for the warm-up's start rather than starting another
        warmed = server._process
        server.connect().close()
        assert warmed is not None and server._process is warmed
        assert warmed.poll() is None
    finally:
        server._stop()


def started_here(tmp_path: Path, *argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(PROBE), str(tmp_path), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    answer: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return answer


@ON_PROC
def test_a_command_line_forks_its_parse_server_from_itself(tmp_path: Path) -> None:
    """``acp-lsp check`` (ADR 0038): no interpreter of its own to start; it
    reads, shrugs off a Ctrl-C meant for the command, and ends with status 0
    once the command's end closes."""
    answer = started_here(tmp_path)
    assert answer == {"forked": True, "found": [1, 1], "status": 0}


@ON_PROC
def test_with_another_thread_running_it_starts_an_interpreter_instead(tmp_path: Path) -> None:
    """A fork copies every lock another thread held at that moment."""
    answer = started_here(tmp_path, "thread")
    assert answer == {"forked": False, "found": [1, 1], "status": 0}


@ON_PROC
def test_a_fork_refused_leaves_the_start_to_the_first_parse(tmp_path: Path) -> None:
    """No process to spare when the command starts: no error there; the
    first parse starts the server (and would say why, were that refused too)."""
    answer = started_here(tmp_path, "no-fork")
    assert answer == {"forked": False, "found": [1, 1], "status": 0}
