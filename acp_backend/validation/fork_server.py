"""The backend's end of the parse server (``isolation``): started once per
process, on first use or as early as a caller knows it will be needed.

Standard library only: a command line that is about to run validations
starts it before loading anything else (``acp-lsp check``), so that its
interpreter is up by the time the first output is read (ADR 0031).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

SERVER_FD_ENV = "ACP_PARSE_SERVER_FD"


class ForkServer:
    """The backend's end of the fork server, started on first use or by ``warm_up``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
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


SERVER = ForkServer()
warm_up = SERVER.warm_up
