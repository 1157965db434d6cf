"""SIGTERM and SIGHUP to each command that may host validators: they end
cleanly, with the validators' process groups, and ``serve`` withdraws
``backend.json``.

Each command runs for real in its own process on a temporary data dir; the
validator forks a sleeper and records its process group id, so the test
checks by group that nothing of it survives.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_client.paths import path_to_uri
from tests.support.validation import running_in_group
from tests.support.waiting import wait_until

PYTHON = sys.executable
BACKEND = (PYTHON, "-m", "acp_backend.cli")
LSP = (PYTHON, "-m", "lsp_server")
HANGING = 'echo $$ >> "{pids}"; sleep 30 & sleep 30; wait'
SIGNALS = [signal.SIGTERM, signal.SIGHUP]


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.data = tmp_path / "data"
        self.root = tmp_path / "proj"
        self.pids = tmp_path / "pids"
        self.root.mkdir()
        (self.root / "app.py").write_text("x = 1\n", encoding="utf-8")
        script = HANGING.format(pids=self.pids)
        (self.root / "acp.toml").write_text(
            '[[validations]]\nname = "hang"\nmode = "required"\n'
            f'timeout = 60\ncommand = ["sh", "-c", {script!r}]\n',
            encoding="utf-8",
        )
        added = subprocess.run(
            [*BACKEND, "--data-dir", str(self.data), "resource", "add", str(self.root)],
            capture_output=True,
            check=False,
        )
        assert added.returncode == 0, added.stderr

    def start(
        self, *command: str, stdin: int | None = subprocess.DEVNULL
    ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

    def validator_groups(self) -> list[int]:
        return [int(pid) for pid in self.pids.read_text().split()] if self.pids.exists() else []

    def validator_running(self) -> bool:
        return any(len(running_in_group(pgid)) >= 2 for pgid in self.validator_groups())

    def survivors(self) -> list[int]:
        return [pid for pgid in self.validator_groups() for pid in running_in_group(pgid)]


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    made = Setup(tmp_path)
    yield made
    for pgid in made.validator_groups():  # a failed test must not leave sleepers
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def ends_cleanly(setup: Setup, process: subprocess.Popen[bytes], signum: int) -> None:
    """Signal ``process`` mid-run; it exits soon, and no validator survives."""
    wait_until(setup.validator_running, 20)
    process.send_signal(signum)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError("the command did not end on the signal") from None
    wait_until(lambda: setup.survivors() == [], seconds=5)


@pytest.mark.parametrize("signum", SIGNALS)
def test_validation_run_wait(setup: Setup, signum: int) -> None:
    process = setup.start(
        *BACKEND, "--data-dir", str(setup.data), "validation", "run", "proj", "--wait"
    )
    ends_cleanly(setup, process, signum)
    assert process.returncode == 128 + signum


@pytest.mark.parametrize("signum", SIGNALS)
def test_lsp_check(setup: Setup, signum: int) -> None:
    process = setup.start(*LSP, "check", "--data-dir", str(setup.data), str(setup.root))
    ends_cleanly(setup, process, signum)
    assert process.returncode == 128 + signum


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


@pytest.mark.parametrize("signum", SIGNALS)
def test_language_server_on_stdio(setup: Setup, signum: int) -> None:
    process = setup.start(*LSP, "--data-dir", str(setup.data), stdin=subprocess.PIPE)
    assert process.stdin is not None
    root_uri, file_uri = path_to_uri(str(setup.root)), path_to_uri(str(setup.root / "app.py"))
    document = {"uri": file_uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
    for message in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": root_uri,
                "capabilities": {},
                "workspaceFolders": [{"uri": root_uri, "name": "proj"}],
            },
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}},
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didSave",
            "params": {"textDocument": {"uri": file_uri}},
        },
    ):
        process.stdin.write(frame(message))
    process.stdin.flush()  # and left open: the editor is still there
    try:
        ends_cleanly(setup, process, signum)
        assert process.returncode == 128 + signum
    finally:
        process.stdin.close()


def start_run_on(backend_file: Path) -> None:
    """``validation.run`` straight to the server (discovery's short health
    budget could fall back to an in-process backend on a loaded machine)."""
    wait_until(backend_file.exists, 20)
    info = json.loads(backend_file.read_text(encoding="utf-8"))
    request = urllib.request.Request(
        f"http://127.0.0.1:{info['port']}/acp/v1",
        data=json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "validation.run", "params": {"resource": "proj"}}
        ).encode(),
        headers={"Authorization": f"Bearer {info['token']}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert "run_id" in json.loads(response.read())["result"]


@pytest.mark.parametrize("signum", SIGNALS)
def test_serve(setup: Setup, signum: int) -> None:
    serve = setup.start(*BACKEND, "--data-dir", str(setup.data), "serve")
    backend_file = setup.data / "backend.json"
    try:
        start_run_on(backend_file)
        ends_cleanly(setup, serve, signum)
        assert not backend_file.exists()
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def test_kill_9_of_serve_mid_run_leaves_no_validator(setup: Setup) -> None:
    """No cleanup can run in a SIGKILLed backend: its watcher process ends the groups."""
    serve = setup.start(*BACKEND, "--data-dir", str(setup.data), "serve")
    try:
        start_run_on(setup.data / "backend.json")
        ends_cleanly(setup, serve, signal.SIGKILL)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
