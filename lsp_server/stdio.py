"""Stdin for the stdio server that reads as closed once SIGTERM or SIGHUP arrives.

pygls reads stdin in a worker thread and ends when it reads end-of-file.
Turning those signals into that end-of-file gives them the path an editor
closing the pipe takes: the loop ends, its tasks are cancelled and awaited
(an in-process backend kills its validators' process groups), and the
worker thread is free to be joined. Killing the process outright would
leave the validators running: they lead sessions of their own.
"""

from __future__ import annotations

import os
import select
import signal
from types import FrameType
from typing import BinaryIO

from acp_client.signals import TERMINATING

_CHUNK = 64 * 1024


class SignalledStdin:
    """The part of a binary stream pygls reads with: ``readline`` and ``read``."""

    def __init__(self, stream: BinaryIO) -> None:
        self._fd = stream.fileno()
        self._wake_read, self._wake_write = os.pipe()
        self._buffer = bytearray()
        self._ended = False
        self.signum: int | None = None  # the signal that ended it, if one did

    def install(self) -> None:
        """Handle the terminating signals (call from the main thread)."""
        for signum in TERMINATING:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            os.write(self._wake_write, b"\0")

    def _fill(self) -> bool:
        """Read more; False once stdin closed or a signal ended it."""
        if self._ended:
            return False
        ready, _, _ = select.select([self._fd, self._wake_read], [], [])
        chunk = b"" if self._wake_read in ready else os.read(self._fd, _CHUNK)
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        return True

    def readline(self) -> bytes:
        while b"\n" not in self._buffer and self._fill():
            pass
        end = self._buffer.find(b"\n") + 1 or len(self._buffer)
        return self._take(end)

    def read(self, size: int = -1) -> bytes:
        while (size < 0 or len(self._buffer) < size) and self._fill():
            pass
        return self._take(len(self._buffer) if size < 0 else size)

    def _take(self, size: int) -> bytes:
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken
