"""The fault suite's guard: no process it started may outlive it.

Every fault test runs with ``ACP_FAULT_SUITE`` in the environment, which
every process it starts inherits (the backend, its validators, their
children, even one that left its process group). After each test, and once
more at the end of the session, no live process may still carry it;
survivors are killed (by pid) and reported.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.lsp_harness import backend, data_dir, lsp, server_process

__all__ = ["backend", "data_dir", "lsp", "server_process"]  # for tests that start acp-lsp

MARKER_ENV = "ACP_FAULT_SUITE"
MARKER = f"{MARKER_ENV}={uuid.uuid4().hex}".encode()
_GRACE = 5.0  # a SIGKILLed process is listed a moment longer

if not sys.platform.startswith("linux"):
    pytest.skip("the fault suite reads /proc", allow_module_level=True)


PARSE_SERVER = b"acp_backend.validation.isolation import serve"


def marked_processes() -> list[int]:
    """Live (non-zombie) processes other than this one whose environment holds
    the marker. This process's own parse server is not one: a backend's fork
    server lives as long as its backend (here, the test process hosting
    in-process backends) and exits with it."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        pid = int(environ.parent.name)
        if pid == os.getpid():
            continue
        try:
            if MARKER not in environ.read_bytes().split(b"\0"):
                continue
            stat = (environ.parent / "stat").read_text().rsplit(")", 1)[1].split()
            command = (environ.parent / "cmdline").read_bytes()
        except OSError:
            continue  # gone, or not ours to read
        state, parent = stat[0], int(stat[1])
        if state == "Z" or (parent == os.getpid() and PARSE_SERVER in command):
            continue
        found.append(pid)
    return found


def survivors(grace: float = _GRACE) -> list[str]:
    """What is still alive after ``grace`` seconds, killed and described."""
    deadline = time.monotonic() + grace
    while (alive := marked_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    described = []
    for pid in alive:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        described.append(f"{pid}: {command.strip()}")
    return described


@pytest.fixture(scope="session")
def no_survivor_at_the_end() -> Iterator[None]:
    yield
    left = survivors()
    assert not left, "processes started by the fault suite outlived it:\n" + "\n".join(left)


@pytest.fixture(autouse=True)
def marked(
    no_survivor_at_the_end: None, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[None]:
    """The marker in the environment while the test runs; its survivors after."""
    name, value = MARKER.decode().split("=", 1)
    monkeypatch.setenv(name, value)
    yield
    monkeypatch.delenv(name)
    left = survivors()
    assert not left, f"still running after {request.node.nodeid}:\n" + "\n".join(left)
