"""Running one validator's command: its own process group, a timeout, a cap on output.

The command runs in a new session so that killing its process group also
kills whatever it spawned. When the command ends, anything it left running
in its group is killed too: a straggler holding the output pipes open would
otherwise hang the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from asyncio import FIRST_COMPLETED
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

OUTPUT_CAP = 64 * 1024 * 1024
_CHUNK = 64 * 1024
_DRAIN_GRACE = 2.0  # seconds to finish reading once the process group is dead


class Ending(StrEnum):
    EXITED = "exited"
    TIMED_OUT = "timed_out"
    OUTPUT_TOO_LARGE = "output_too_large"
    NOT_STARTED = "not_started"


@dataclass(frozen=True)
class ProcessOutcome:
    ending: Ending
    status: int | None = None  # exit status; negative: killed by that signal
    stdout: str = ""
    stderr: str = ""
    error: str = ""  # why it did not start


def validator_environment() -> dict[str, str]:
    """The backend's environment, with its own interpreter's directory at the end
    of PATH: tools installed beside the backend (``pip install acp-lsp[examples]``)
    are found without activating its virtual environment, and the user's own
    PATH still comes first."""
    env = dict(os.environ)
    tools = str(Path(sys.executable).parent)
    paths = env.get("PATH", "").split(os.pathsep) if env.get("PATH") else []
    if tools not in paths:
        env["PATH"] = os.pathsep.join([*paths, tools])
    return env


async def run_command(
    command: tuple[str, ...] | str,
    *,
    cwd: Path,
    time_limit: float,
    shell: bool = False,
    output_cap: int = OUTPUT_CAP,
    env: dict[str, str] | None = None,
) -> ProcessOutcome:
    """Run ``command`` in ``cwd`` and collect its output.

    Cancelling the calling task kills the command's whole process group
    before the cancellation propagates.
    """
    loop = asyncio.get_running_loop()
    capture = _Capture(loop, output_cap)
    options: dict[str, Any] = {
        "cwd": cwd,
        "stdin": subprocess.DEVNULL,
        "start_new_session": True,
        "env": env if env is not None else validator_environment(),
    }
    try:
        if isinstance(command, str):
            transport, _ = await loop.subprocess_shell(lambda: capture, command, **options)
        else:
            transport, _ = await loop.subprocess_exec(lambda: capture, *command, **options)
    except FileNotFoundError as exc:
        if exc.filename is not None and Path(str(exc.filename)) == cwd:
            return ProcessOutcome(Ending.NOT_STARTED, error=f"working directory {cwd} is missing")
        return ProcessOutcome(
            Ending.NOT_STARTED, error=f"executable not found: {_program(command)}"
        )
    except OSError as exc:
        return ProcessOutcome(
            Ending.NOT_STARTED, error=f"cannot start {_program(command)}: {exc.strerror}"
        )
    try:
        done, _ = await asyncio.wait(
            [capture.exited, capture.cap_hit], timeout=time_limit, return_when=FIRST_COMPLETED
        )
    finally:
        # Normal end, timeout, cap or cancellation: nothing of the group survives.
        _kill_group(transport)
        await _reap(transport, capture)
    if not done:
        ending = Ending.TIMED_OUT
    elif capture.cap_hit.done():
        ending = Ending.OUTPUT_TOO_LARGE
    else:
        ending = Ending.EXITED
    return ProcessOutcome(
        ending, status=transport.get_returncode(), stdout=capture.text(1), stderr=capture.text(2)
    )


def _program(command: tuple[str, ...] | str) -> str:
    return command if isinstance(command, str) else command[0]


class _Capture(asyncio.SubprocessProtocol):
    """Collects both streams up to a shared cap, and tells when the process
    exited (``exited``) and when its pipes closed too (``closed``)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cap: int) -> None:
        self._chunks: dict[int, list[bytes]] = {1: [], 2: []}
        self._remaining = cap
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self.cap_hit: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self._remaining -= len(data)
        if self._remaining < 0:
            _resolve(self.cap_hit)
        else:
            self._chunks[fd].append(data)

    def process_exited(self) -> None:
        _resolve(self.exited)

    def connection_lost(self, exc: Exception | None) -> None:
        _resolve(self.closed)

    def text(self, fd: int) -> str:
        """Invalid UTF-8 is replaced, never fatal."""
        return b"".join(self._chunks[fd]).decode("utf-8", "replace")


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _kill_group(transport: asyncio.SubprocessTransport) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(transport.get_pid(), signal.SIGKILL)  # the group leader's pid is its id
        else:  # Windows has no process groups to signal: the command itself, at least
            transport.kill()


async def _reap(transport: asyncio.SubprocessTransport, capture: _Capture) -> None:
    """Wait for the killed process and its pipes, even while being cancelled
    (the cancellation is re-raised once reaping is done)."""
    reaping = asyncio.ensure_future(_settle(transport, capture))
    try:
        await asyncio.shield(reaping)
    except asyncio.CancelledError:
        await reaping
        raise


async def _settle(transport: asyncio.SubprocessTransport, capture: _Capture) -> None:
    # The group is dead, so its pipes close; a process that left the group
    # (setsid) could still hold them, so do not wait for it forever.
    await asyncio.wait([capture.closed], timeout=_DRAIN_GRACE)
    transport.close()
    await asyncio.shield(capture.exited)
