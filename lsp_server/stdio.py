"""The stdio server's ends of the pipes.

``SignalledStdin``: stdin that reads as closed once SIGTERM or SIGHUP arrives.

pygls reads stdin in a worker thread and ends when it reads end-of-file.
Turning those signals into that end-of-file gives them the path an editor
closing the pipe takes: the loop ends, its tasks are cancelled and awaited
(an in-process backend kills its validators' process groups), and the
worker thread is free to be joined. Killing the process outright would
leave the validators running: they lead sessions of their own.

``PipeStdout``: stdout that never blocks the event loop. pygls writes each
message and flushes; to a pipe the editor reads slowly (or not at all while
it is busy) that write blocks once the pipe's 64 KiB are full, and with it
every request: a 10,000-finding burst stalled the loop for 30 ms a slice.
Here what the pipe cannot take waits in a buffer the loop sends as the
editor reads, in order; closing (at ``exit``) sends the rest, blocking.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import stat
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


class PipeStdout:
    """The part of a binary stream pygls writes with: ``write``, ``flush``, ``close``."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._fd = stream.fileno()
        mode = os.fstat(self._fd).st_mode
        # A tty or a file may be shared with stderr: only the editor's pipe
        # (or socket) is made non-blocking.
        self._buffered = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        if self._buffered:
            os.set_blocking(self._fd, False)
        self._pending = bytearray()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._broken = False

    @property
    def pending(self) -> int:
        """Bytes written but not yet taken by the pipe."""
        return len(self._pending)

    def write(self, data: bytes) -> int:
        if not self._buffered:
            self._stream.write(data)
            return len(data)
        if self._broken:
            raise BrokenPipeError("the editor closed its end of stdout")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or (self._loop is not None and loop is not self._loop):
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self.write, data)  # in order, on its thread
            else:
                self._pending += data
                self._send_all()
            return len(data)
        self._loop = loop
        if not self._pending:
            data = data[self._send(data) :]
            if data:
                loop.add_writer(self._fd, self._drain)
        self._pending += data
        return len(data)

    def flush(self) -> None:
        if not self._buffered:
            self._stream.flush()

    def close(self) -> None:
        """Send what is left (blocking: the process is about to end), then close."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_writer(self._fd)
        if self._buffered:
            self._send_all()
        self._stream.close()

    def _send(self, data: bytes | bytearray) -> int:
        try:
            return os.write(self._fd, data)
        except BlockingIOError:
            return 0
        except OSError:  # the editor is gone: nothing will read this
            self._broken = True
            return len(data)

    def _send_all(self) -> None:
        os.set_blocking(self._fd, True)
        try:
            while self._pending and not self._broken:
                del self._pending[: self._send(self._pending)]
        finally:
            self._pending.clear()
            os.set_blocking(self._fd, False)

    def _drain(self) -> None:
        del self._pending[: self._send(self._pending)]
        if not self._pending and self._loop is not None:
            self._loop.remove_writer(self._fd)
