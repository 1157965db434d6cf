"""stdout never blocks the event loop on an editor that reads slowly, and
puts answers before bulk pushes; stdin is read on the loop."""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from lsp_server.stdio import PIPE_BYTES, LoopReader, PipeStdout, SignalledStdin


def _pipe() -> tuple[int, PipeStdout]:
    read_end, write_end = os.pipe()
    return read_end, PipeStdout(os.fdopen(write_end, "wb"))


def _read_all(fd: int, into: bytearray) -> None:
    while chunk := os.read(fd, 1 << 16):
        into += chunk


def test_a_full_pipe_does_not_block_the_loop_and_loses_nothing() -> None:
    read_end, stdout = _pipe()
    messages = [bytes([65 + n % 26]) * 100_000 for n in range(40)]  # 4 MB, 60x the pipe

    async def main() -> int:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0)
        for message in messages:
            stdout.write(message)  # nobody reads yet: it must still return
        assert stdout.pending > 3_000_000
        before = ticks
        await asyncio.sleep(0.05)
        assert ticks > before  # the loop runs while the editor does not read
        ticker.cancel()
        received = bytearray()
        reader = threading.Thread(target=_read_all, args=(read_end, received))
        reader.start()
        while stdout.pending:  # noqa: ASYNC110 (the writer has no event to wait on)
            await asyncio.sleep(0.01)  # the loop sends the rest as the pipe drains
        stdout.close()
        reader.join(5)
        assert bytes(received) == b"".join(messages)
        return ticks

    asyncio.run(main())
    os.close(read_end)


def test_close_sends_what_is_left_before_the_process_ends() -> None:
    read_end, stdout = _pipe()
    received = bytearray()

    async def main() -> None:
        stdout.write(b"x" * 300_000)
        assert stdout.pending

    asyncio.run(main())
    reader = threading.Thread(target=_read_all, args=(read_end, received))
    reader.start()
    stdout.close()  # as pygls does at exit: blocking, everything out
    reader.join(5)
    assert received == b"x" * 300_000
    os.close(read_end)


def test_a_closed_editor_end_raises_broken_pipe_once_known() -> None:
    read_end, stdout = _pipe()
    os.close(read_end)

    async def main() -> None:
        stdout.write(b"lost")  # the first write finds out
        try:
            stdout.write(b"more")
        except BrokenPipeError:
            return
        raise AssertionError("expected BrokenPipeError")

    asyncio.run(main())
    stdout.close()


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="Linux pipes only")
def test_the_editors_pipe_holds_a_large_files_diagnostics_in_one_write() -> None:
    read_end, stdout = _pipe()
    message = b"x" * 140_000  # a file's diagnostics at 370 findings

    async def main() -> int:
        stdout.write(message)
        return stdout.pending

    assert asyncio.run(main()) == 0  # the pipe took it whole
    assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == PIPE_BYTES
    os.close(read_end)
    stdout.close()


def test_a_file_is_written_through_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "out"
    with path.open("wb") as raw:
        stdout = PipeStdout(raw)
        stdout.write(b"abc")
        stdout.flush()
        assert stdout.pending == 0
    assert path.read_bytes() == b"abc"


def test_an_answer_goes_out_before_the_bulk_pushes_still_waiting() -> None:
    read_end, stdout = _pipe()
    pushes = [bytes([65 + n % 26]) * 10_000 for n in range(80)]  # 800 KB: the pipe takes 256
    answer = b"<the answer to a request>"

    async def main() -> bytes:
        for push in pushes:
            stdout.write_bulk(push)
        assert stdout.pending > 500_000
        stdout.write(answer)
        received = bytearray()
        reader = threading.Thread(target=_read_all, args=(read_end, received))
        reader.start()
        while stdout.pending:  # noqa: ASYNC110 (the writer has no event to wait on)
            await asyncio.sleep(0.01)
        stdout.close()
        reader.join(5)
        return bytes(received)

    received = asyncio.run(main())
    os.close(read_end)
    at = received.index(answer)
    assert at % 10_000 == 0, "never inside another message"
    assert at <= PIPE_BYTES + 10_000, "behind what the pipe held, not the pushes that waited"
    assert received[:at] + received[at + len(answer) :] == b"".join(pushes)  # in order


def _join_reader() -> None:
    """Until ``LoopReader``'s thread has seen stdin end (before it is closed)."""
    for thread in threading.enumerate():
        if thread.name == "stdin":
            thread.join(5)


def test_loop_reader_reads_messages_whatever_the_chunks_and_ends_at_eof() -> None:
    read_end, write_end = os.pipe()
    stream = os.fdopen(read_end, "rb")  # kept open: SignalledStdin reads its fd
    stdin = SignalledStdin(stream)
    body = b'{"jsonrpc": "2.0", "method": "m"}'
    message = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)

    async def main() -> list[bytes]:
        reader = LoopReader(stdin)
        got = [await reader.readline()]
        got.append(await reader.readline())
        got.append(await reader.readexactly(len(body)))
        got.append(await reader.readline())
        got.append(await reader.readexactly(100))  # stdin ends mid-message
        return got

    def feed() -> None:
        os.write(write_end, message[:5])  # a header split across reads
        time.sleep(0.05)
        os.write(write_end, message[5:] + b"Content-Length: 100\r\n")
        time.sleep(0.05)
        os.write(write_end, b"\r\n{")
        os.close(write_end)

    feeder = threading.Thread(target=feed)
    feeder.start()
    got = asyncio.run(main())
    feeder.join(5)
    _join_reader()
    stream.close()
    assert got == [
        b"Content-Length: %d\r\n" % len(body),
        b"\r\n",
        body,
        b"Content-Length: 100\r\n",
        b"",
    ]


def test_loop_reader_reads_a_buffered_message_without_leaving_the_loop() -> None:
    """pygls's reader hops to a thread and back for each of a message's
    three reads: in a burst each hop waited for a busy loop and the GIL."""
    read_end, write_end = os.pipe()
    stream = os.fdopen(read_end, "rb")  # kept open: SignalledStdin reads its fd
    stdin = SignalledStdin(stream)
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "m"}'
    message = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    os.write(write_end, message * 2)

    async def main() -> list[str]:
        reader = LoopReader(stdin)
        await reader.readline()  # the first read waits for stdin to be ready
        await asyncio.sleep(0.05)  # by now both messages are buffered
        order: list[str] = []
        asyncio.get_running_loop().call_soon(order.append, "other work")
        await reader.readline()
        await reader.readexactly(len(body))
        for _ in range(2):
            await reader.readline()
        await reader.readexactly(len(body))
        order.append("two messages read")
        return order

    order = asyncio.run(main())
    os.close(write_end)  # the reader's thread sees the end and stops
    _join_reader()
    stream.close()
    assert order == ["two messages read", "other work"]


class _ReadsNoted:
    """A ``SignalledStdin`` noting the thread each read runs on."""

    def __init__(self, stdin: SignalledStdin) -> None:
        self.stdin = stdin
        self.threads: set[str] = set()

    def filenos(self) -> tuple[int, ...]:
        return self.stdin.filenos()

    def read1(self, size: int = -1, /) -> bytes:
        self.threads.add(threading.current_thread().name)
        return self.stdin.read1(size)


def test_a_pipe_is_watched_by_the_loop_itself_and_a_signal_ends_it() -> None:
    """Read on the loop's thread (a message wakes the loop once, not a
    thread and then the loop); a terminating signal still reads as the end."""
    read_end, write_end = os.pipe()
    stream = os.fdopen(read_end, "rb")
    stdin = _ReadsNoted(SignalledStdin(stream))
    body = b'{"jsonrpc": "2.0", "method": "m"}'
    os.write(write_end, b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def main() -> list[bytes]:
        reader = LoopReader(stdin)
        got = [await reader.readline(), await reader.readline()]
        got.append(await reader.readexactly(len(body)))
        stdin.stdin._on_signal(signal.SIGTERM, None)  # as the handler installed for it would
        got.append(await asyncio.wait_for(reader.readline(), 5))
        return got

    got = asyncio.run(main())
    os.close(write_end)
    stream.close()
    assert got[2:] == [body, b""]
    assert stdin.threads == {threading.main_thread().name}
    assert stdin.stdin.signum == signal.SIGTERM


def test_a_regular_file_on_stdin_is_read_by_a_thread(tmp_path: Path) -> None:
    """``acp-lsp < recorded.jsonrpc``: epoll cannot watch a file, a thread reads it."""
    body = b'{"jsonrpc": "2.0", "method": "m"}'
    recorded = tmp_path / "recorded.jsonrpc"
    recorded.write_bytes(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    with recorded.open("rb") as stream:
        stdin = _ReadsNoted(SignalledStdin(stream))

        async def main() -> list[bytes]:
            reader = LoopReader(stdin)
            got = [await reader.readline(), await reader.readline()]
            got.append(await reader.readexactly(len(body)))
            got.append(await reader.readline())
            return got

        got = asyncio.run(main())
        _join_reader()
    assert got[2:] == [body, b""]
    assert stdin.threads == {"stdin"}
