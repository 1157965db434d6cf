"""Running one validator's command: its own process group, a timeout, a cap on output.

The command runs in a new session so that killing its process group also
kills whatever it spawned. Every way a run ends (exit, timeout, output cap,
cancellation, even while the command is still starting) kills the whole
group: a straggler holding the output pipes open would otherwise hang the
run, and one outliving it would hold on to a concurrency slot's work. A
process that leaves the group (``setsid``) is beyond reach: see ADR 0007.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import subprocess
import sys
import threading
from asyncio import FIRST_COMPLETED
from collections.abc import Coroutine
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any

from acp_client.transport import TOKEN_ENV

log = logging.getLogger(__name__)

OUTPUT_CAP = 64 * 1024 * 1024
# What a validator must never see (it could print it into a stored result).
SECRET_ENV = frozenset({TOKEN_ENV})
_CHUNK = 64 * 1024
_DRAIN_GRACE = 2.0  # seconds to finish reading once the process group is dead


# Terminal control sequences a tool that colours even when piped writes:
# CSI (SGR colours, cursor moves, erasing), OSC (titles, hyperlinks) and the
# two-byte escapes. They are never part of what a finding says.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def output_text(data: bytes) -> str:
    """A tool's output as text: invalid UTF-8 replaced, never fatal, and
    terminal escape sequences removed (the usual output has none: one scan)."""
    text = data.decode("utf-8", "replace")
    return _ESCAPES.sub("", text) if "\x1b" in text else text


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
    """The backend's environment without its secrets, with its own interpreter's
    directory at the end of PATH: tools installed beside the backend (``pip
    install acp-lsp[examples]``) are found without activating its virtual
    environment, and the user's own PATH still comes first."""
    env = os.environ.copy()
    for name in SECRET_ENV:
        env.pop(name, None)
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
    started = _start(command, cwd, env if env is not None else validator_environment())
    if isinstance(started, ProcessOutcome):
        return started
    # Nothing was awaited since the fork: from here on, every way out kills the group.
    process = started
    LIFELINE.watch(process.pid)
    loop = asyncio.get_running_loop()
    capture = _Capture(loop, output_cap)
    exited = _exit_of(loop, process)
    try:
        await capture.connect(loop, process)
        done, _ = await asyncio.wait(
            [exited, capture.cap_hit], timeout=time_limit, return_when=FIRST_COMPLETED
        )
    finally:
        _kill_group(process)  # before any await: even a loop shutting down cannot skip it
        try:
            if exited.done() and capture.closed.done():  # the usual end: nothing to wait for
                capture.close(process)
            else:
                await _to_the_end(_reap(process, capture, exited))
        finally:
            LIFELINE.forget(process.pid)  # dead: its id may be reused
    if not done:
        ending = Ending.TIMED_OUT
    elif capture.cap_hit.done():
        ending = Ending.OUTPUT_TOO_LARGE
    else:
        ending = Ending.EXITED
    return ProcessOutcome(
        ending, status=process.returncode, stdout=capture.text(1), stderr=capture.text(2)
    )


def _start(
    command: tuple[str, ...] | str, cwd: Path, env: dict[str, str]
) -> subprocess.Popen[bytes] | ProcessOutcome:
    """The started command (leading a new session and process group), or why
    it did not start. Synchronous, as asyncio's own spawn is: its pid is
    known before anything could cancel the caller."""
    try:
        return subprocess.Popen(
            command,
            shell=isinstance(command, str),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
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


# The watcher: reads "+pgid" / "-pgid" lines; at end of input (its backend is
# gone, even by SIGKILL), kills the groups still listed.
_WATCHER = """
import os, signal, sys
groups = set()
for line in sys.stdin:
    (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""


class Lifeline:
    """Validators outlive a backend that dies without cleaning up (``kill -9``,
    a crash): they lead sessions of their own. One small watcher process per
    backend holds the other end of a pipe; when the backend dies, the pipe
    closes and the watcher kills the groups of the validators still running."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watcher: subprocess.Popen[bytes] | None = None

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        if not hasattr(os, "killpg"):
            return
        with self._lock:
            try:
                if self._watcher is None or self._watcher.poll() is not None:
                    self._watcher = subprocess.Popen(
                        [sys.executable, "-c", _WATCHER],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,  # a terminal's signals must not end it first
                        env={},
                    )
                assert self._watcher.stdin is not None
                self._watcher.stdin.write(line.encode())
                self._watcher.stdin.flush()
            except OSError:  # no watcher: the backend's own cleanup still applies
                log.warning("the validators' watcher is not running", exc_info=True)


LIFELINE = Lifeline()


def _program(command: tuple[str, ...] | str) -> str:
    return command if isinstance(command, str) else command[0]


class _Capture:
    """Collects both streams up to a shared cap, and tells when both pipes
    closed (``closed``) and when the cap was exceeded (``cap_hit``)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cap: int) -> None:
        self._chunks: dict[int, list[bytes]] = {1: [], 2: []}
        self._remaining = cap
        self._open = 2
        self._transports: list[asyncio.BaseTransport] = []
        self.closed: asyncio.Future[None] = loop.create_future()
        self.cap_hit: asyncio.Future[None] = loop.create_future()

    async def connect(
        self, loop: asyncio.AbstractEventLoop, process: subprocess.Popen[bytes]
    ) -> None:
        for fd, pipe in ((1, process.stdout), (2, process.stderr)):
            transport, _ = await loop.connect_read_pipe(partial(_Stream, self, fd), pipe)
            self._transports.append(transport)

    @property
    def connected(self) -> bool:
        return len(self._transports) == 2

    def received(self, fd: int, data: bytes) -> None:
        self._remaining -= len(data)
        if self._remaining < 0:
            _resolve(self.cap_hit)
        else:
            self._chunks[fd].append(data)

    def lost(self) -> None:
        self._open -= 1
        if self._open == 0:  # both were connected: a stream is lost only after that
            _resolve(self.closed)

    def close(self, process: subprocess.Popen[bytes]) -> None:
        for transport in self._transports:
            transport.close()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()

    def text(self, fd: int) -> str:
        return output_text(b"".join(self._chunks[fd]))


class _Stream(asyncio.Protocol):
    def __init__(self, capture: _Capture, fd: int) -> None:
        self._capture = capture
        self._fd = fd

    def data_received(self, data: bytes) -> None:
        self._capture.received(self._fd, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._capture.lost()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)  # the group leader's pid is its id
        else:  # Windows has no process groups to signal: the command itself, at least
            process.kill()


def _exit_of(
    loop: asyncio.AbstractEventLoop, process: subprocess.Popen[bytes]
) -> asyncio.Future[None]:
    """Resolved when ``process`` has exited (and is reaped): told by a pidfd
    the event loop watches (Linux), else by a thread of its own waiting for
    it (a shared pool could run out of threads with many validators).
    Starting a thread per save cost ~1 ms of the event loop's time, and
    its hand-offs of the GIL more."""
    exited: asyncio.Future[None] = loop.create_future()
    pidfd = _pidfd(process.pid)
    if pidfd is not None:

        def readable() -> None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            process.wait()  # it has exited: this only reaps it
            _resolve(exited)

        loop.add_reader(pidfd, readable)
        return exited

    def wait() -> None:
        process.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(_resolve, exited)

    threading.Thread(target=wait, name=f"validator {process.pid}", daemon=True).start()
    return exited


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits, where the
    platform has them (Linux 5.3 and later)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


async def _reap(
    process: subprocess.Popen[bytes], capture: _Capture, exited: asyncio.Future[None]
) -> None:
    """Wait for the killed process and its pipes."""
    # The group is dead, so its pipes close; a process that left the group
    # (setsid) could still hold them, so do not wait for it forever.
    if capture.connected:  # else interrupted while connecting: nothing more to read
        await asyncio.wait([capture.closed], timeout=_DRAIN_GRACE)
    capture.close(process)
    await asyncio.shield(exited)


async def _to_the_end(cleanup: Coroutine[Any, Any, None]) -> None:
    """Run ``cleanup`` to its end even if the caller is cancelled meanwhile
    (then the cancellation is re-raised once it is done)."""
    task = asyncio.ensure_future(cleanup)
    cancelled = False
    while True:
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                raise
            cancelled = True
            continue
        if cancelled:
            raise asyncio.CancelledError
        return
