"""The backend's end of the parse server (``isolation``): started once per
process, on first use or as early as a caller knows it will be needed.

Two ways to start it. A long-lived backend (the language server's,
``acp-backend serve``) runs it in a fresh interpreter: by then the backend
has threads, and a fork copies none of them but every lock they held. A command
line that is about to run validations (``acp-lsp check``) forks it from
itself instead, while it is still single-threaded and right after loading
the parsers, which its own backend needs anyway: no second interpreter to
start and load them again (ADR 0038). This module stays standard library
only, so that loading it costs nothing in either case.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

SERVER_FD_ENV = "ACP_PARSE_SERVER_FD"


class ForkServer:
    """The backend's end of the fork server, started on first use or by ``warm_up``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | Forked | None = None
        self._socket: socket.socket | None = None

    def connect(self) -> Connection:
        """A connection to a newly forked child (blocking: call it off the loop)."""
        from multiprocessing.connection import Connection  # not needed to start the server

        with self._lock:
            for attempt in range(2):
                ours, theirs = socket.socketpair()
                try:
                    socket.send_fds(self._server(), [b"f"], [theirs.fileno()])
                except OSError:
                    ours.close()
                    self._stop()  # it died: start another one, once
                    if attempt:
                        raise
                    continue
                finally:
                    theirs.close()
                return Connection(ours.detach())
        raise AssertionError("unreachable")

    def warm_up(self) -> None:
        """Start the server now, off the caller's thread: the first results
        of a session should not wait for an interpreter to start."""

        def start() -> None:
            with self._lock, contextlib.suppress(OSError):
                self._server()

        threading.Thread(target=start, name="parse server start", daemon=True).start()

    def fork_here(self) -> None:
        """Start the server as a fork of this process, now, with the parsers
        loaded first. Only while this process runs no other thread (else: as
        ``warm_up``): a forked server would inherit a lock some thread held."""
        if threading.active_count() > 1:
            self.warm_up()
            return
        from acp_backend.validation import isolation, validator  # what every parse runs

        del validator
        with self._lock:
            if self._socket is not None:
                return
            ours, theirs = socket.socketpair()
            try:
                pid = os.fork()
            except OSError:  # no process to spare now: the first parse tries, and says why
                ours.close()
                theirs.close()
                return
            if pid == 0:
                try:
                    ours.close()
                    _leave_caller_behind()
                    isolation.serve(theirs)
                finally:
                    os._exit(0)
            theirs.close()
            self._socket, self._process = ours, Forked(pid)

    def _server(self) -> socket.socket:
        if self._socket is not None and self._process is not None:
            if self._process.poll() is None:
                return self._socket
            self._stop()
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env[SERVER_FD_ENV] = str(theirs.fileno())
        # The same imports as here, wherever acp-lsp was started from.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from acp_backend.validation.isolation import serve; serve()"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # never the language server's stdio channel
            pass_fds=[theirs.fileno()],
            env=env,
        )
        theirs.close()
        self._socket = ours
        return ours

    def _stop(self) -> None:
        if self._socket is not None:
            self._socket.close()  # the server exits when this closes
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            self._process.wait()
        self._socket = self._process = None


def _leave_caller_behind() -> None:
    """In a server forked from a command line: no hold on its stdin and
    stdout (whoever reads the command's output waits for every holder), and
    a collector of its own again (the caller may have paused its own)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    gc.enable()
    gc.freeze()  # what the caller loaded stays out of the server's collections


class Forked:
    """A server forked from this process, seen as ``subprocess.Popen`` sees
    the other kind (the parts of it this module and its tests use)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reaped(os.WNOHANG)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Until it has ended (``timeout``: seconds; ``TimeoutError`` past them)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is None:
                self._reaped(0)
            elif time.monotonic() > deadline:
                raise TimeoutError(f"the parse server {self.pid} is still running")
            else:
                time.sleep(0.01)
        return cast("int", self.returncode)

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)

    def _reaped(self, options: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, options)
        except ChildProcessError:  # reaped elsewhere: ended, status unknown (0, as Popen says)
            self.returncode = 0
            return
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)


SERVER = ForkServer()
warm_up = SERVER.warm_up
fork_here = SERVER.fork_here
