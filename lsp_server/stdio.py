"""The stdio server's ends of the pipes.

``SignalledStdin``: stdin that reads as closed once SIGTERM or SIGHUP arrives.

The server ends when stdin reads end-of-file. Turning those signals into
that end-of-file gives them the path an editor closing the pipe takes: the
loop ends, its tasks are cancelled and awaited (an in-process backend kills
its validators' process groups). Killing the process outright would leave
the validators running: they lead sessions of their own.

``LoopReader``: pygls's reader (``readline``, ``readexactly``) served on the
event loop (``serve`` runs a server's protocol with it). pygls reads each
message with three calls (the header line, the blank line, the body), each a
hop to a worker thread and back; in a 100,000-finding burst each hop waited
for the GIL and for a busy loop, and a request took 30-300 ms to be read
while the loop never stood still for more than 30 ms. Here what stdin gives
goes into a buffer on the loop, and a message in the buffer is read without
leaving the loop. The loop itself watches stdin (the editor's pipe or
socket): a message wakes it once, where a reading thread took a wake-up of
its own, the GIL, then the loop's (~0.2 ms before a save could start its
tool; ``bench/bench_budget.py``). Only what the loop cannot watch (a
regular file) is read by a thread.

``PipeStdout``: stdout that never blocks the event loop. pygls writes each
message and flushes; to a pipe the editor reads slowly (or not at all while
it is busy) that write blocks once the pipe's 64 KiB are full, and with it
every request: a 10,000-finding burst stalled the loop for 30 ms a slice.
Here what the pipe cannot take waits in a buffer the loop sends as the
editor reads; closing (at ``exit``) sends the rest, blocking. Diagnostics
pushed in bulk (``write_bulk``) wait behind everything else: an answer to a
request written mid-burst goes out next, not after the 256 KiB of pushes the
session lets wait (it waited up to 100-200 ms while the editor read them).
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import signal
import stat
import sys
import threading
from collections import deque
from types import FrameType
from typing import BinaryIO, Protocol, cast

from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

from acp_client.signals import TERMINATING

log = logging.getLogger(__name__)

_CHUNK = 64 * 1024
PIPE_BYTES = 256 * 1024
"""What the editor's pipe holds (Linux's default: 64 KiB). A file's
diagnostics run to ~140 KiB at 370 findings: in a default pipe they went
in three writes, each waiting for the editor to read and for the loop to
be woken again (~0.5-1 ms of a save; ``bench/bench_budget.py``). The
price: an answer may now wait behind this much already in the pipe."""
_BULK_BATCH = 16 * 1024
"""Bytes of bulk messages handed to the pipe in one write: at most this
much more that an answer written meanwhile waits behind."""


class Chunks(Protocol):
    def read1(self, size: int = -1, /) -> bytes:
        """What is there (at most ``size`` bytes), waiting only when nothing
        is; empty at the end."""
        ...


class LoopReader:
    def __init__(self, stdin: Chunks) -> None:
        self._stdin = stdin
        self._buffer: asyncio.StreamReader | None = None

    async def readline(self) -> bytes:
        return await self._started().readline()

    async def readexactly(self, size: int) -> bytes:
        try:
            return await self._started().readexactly(size)
        except asyncio.IncompleteReadError:
            return b""  # stdin ended mid-message: nothing more will come

    def _started(self) -> asyncio.StreamReader:
        if self._buffer is None:
            # No line is too long to wait for (pygls's own reader had no limit).
            self._buffer = asyncio.StreamReader(limit=1 << 40)
            loop = asyncio.get_running_loop()
            if not self._watched(loop, self._buffer):
                threading.Thread(
                    target=self._pump, args=(loop, self._buffer), name="stdin", daemon=True
                ).start()
        return self._buffer

    def _watched(self, loop: asyncio.AbstractEventLoop, buffer: asyncio.StreamReader) -> bool:
        """Read on the loop whenever one of the stdin's ``filenos`` (the
        descriptors whose readiness means ``read1`` will not wait) is ready;
        False when the loop cannot watch them (epoll refuses a regular file)."""
        listed = getattr(self._stdin, "filenos", None)
        filenos: tuple[int, ...] = listed() if listed is not None else ()
        watched: list[int] = []
        try:
            for fd in filenos:
                loop.add_reader(fd, self._ready, loop, buffer, filenos)
                watched.append(fd)
        except (OSError, ValueError, NotImplementedError):
            for fd in watched:
                loop.remove_reader(fd)
            return False
        return bool(watched)

    def _ready(
        self,
        loop: asyncio.AbstractEventLoop,
        buffer: asyncio.StreamReader,
        filenos: tuple[int, ...],
    ) -> None:
        chunk = self._stdin.read1(_CHUNK)  # one of them is ready: it does not wait
        if chunk:
            buffer.feed_data(chunk)
            return
        for fd in filenos:
            loop.remove_reader(fd)
        buffer.feed_eof()

    def _pump(self, loop: asyncio.AbstractEventLoop, buffer: asyncio.StreamReader) -> None:
        try:
            while chunk := self._stdin.read1(_CHUNK):
                loop.call_soon_threadsafe(buffer.feed_data, chunk)
            loop.call_soon_threadsafe(buffer.feed_eof)
        except RuntimeError:  # the loop is closed: the server has ended
            pass


def serve(server: LanguageServer, stdin: BinaryIO | None, stdout: BinaryIO | None) -> None:
    """pygls's ``start_io`` loop with stdin read by a ``LoopReader``: in a
    burst, pygls's three thread hops per message made a request wait 30-300
    ms before it was even read. Ends when stdin does."""
    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    # What __main__ passes, or the buffered stdin: both read in chunks (read1).
    reader = LoopReader(cast("Chunks", stdin or sys.stdin.buffer))
    try:
        asyncio.run(
            run_async(
                stop_event=server._stop_event,
                reader=reader,
                protocol=server.protocol,
                logger=log,
                error_handler=server.report_server_error,
            )
        )
    except BrokenPipeError:
        log.error("the editor closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


class SignalledStdin:
    """The part of a binary stream ``LoopReader`` reads with: ``read1``."""

    def __init__(self, stream: BinaryIO) -> None:
        self._fd = stream.fileno()
        self._wake_read, self._wake_write = os.pipe()
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

    def filenos(self) -> tuple[int, ...]:
        return (self._fd, self._wake_read)

    def read1(self, size: int = -1, /) -> bytes:
        """One read; empty once stdin closed or a signal ended it."""
        if self._ended:
            return b""
        ready, _, _ = select.select([self._fd, self._wake_read], [], [])
        chunk = b"" if self._wake_read in ready else os.read(self._fd, size if size > 0 else _CHUNK)
        self._ended = not chunk
        return chunk


def _widen(fd: int) -> None:
    """Ask for a ``PIPE_BYTES`` pipe (Linux; elsewhere, or over the user's
    pipe quota, it stays as it was)."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


class PipeStdout:
    """The part of a binary stream pygls writes with: ``write``, ``flush``,
    ``close``; and ``write_bulk`` for the diagnostics a burst pushes."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._fd = stream.fileno()
        mode = os.fstat(self._fd).st_mode
        # A tty or a file may be shared with stderr: only the editor's pipe
        # (or socket) is made non-blocking.
        self._buffered = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        if self._buffered:
            os.set_blocking(self._fd, False)
            if stat.S_ISFIFO(mode):
                _widen(self._fd)
        # What goes first: the rest of a message the pipe took part of, then
        # the messages written with ``write``, in order.
        self._first = bytearray()
        self._bulk: deque[bytes] = deque()  # whole messages, in order
        self._bulk_bytes = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._broken = False

    @property
    def pending(self) -> int:
        """Bytes written but not yet taken by the pipe."""
        return len(self._first) + self._bulk_bytes

    def write(self, data: bytes) -> int:
        """A message that goes out before any bulk one still waiting."""
        return self._put(data, bulk=False)

    def write_bulk(self, data: bytes) -> int:
        """A message that may wait behind later ``write`` ones."""
        return self._put(data, bulk=True)

    def _put(self, data: bytes, bulk: bool) -> int:
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
                # In order, on its thread.
                self._loop.call_soon_threadsafe(self._put, data, bulk)
            else:
                self._first += data
                self._send_all()
            return len(data)
        self._loop = loop
        if not self.pending:
            rest = data[self._send(data) :]
            if rest:
                self._first += rest
                loop.add_writer(self._fd, self._drain)
        elif bulk:
            self._bulk.append(data)
            self._bulk_bytes += len(data)
        else:
            self._first += data
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
            while self.pending and not self._broken:
                self._send_first()
        finally:
            self._first.clear()
            self._bulk.clear()
            self._bulk_bytes = 0
            os.set_blocking(self._fd, False)

    def _drain(self) -> None:
        while self.pending and self._send_first():
            pass
        if not self.pending and self._loop is not None:
            self._loop.remove_writer(self._fd)

    def _send_first(self) -> bool:
        """Send from the front (bulk messages join it up to ``_BULK_BATCH``
        bytes at a time, whole); False when the pipe took less than that."""
        while self._bulk and len(self._first) < _BULK_BATCH:
            message = self._bulk.popleft()
            self._bulk_bytes -= len(message)
            self._first += message
        size = len(self._first)
        sent = self._send(self._first)
        del self._first[:sent]
        return sent == size
