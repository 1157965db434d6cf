"""stdout never blocks the event loop on an editor that reads slowly."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from lsp_server.stdio import PipeStdout


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


def test_a_file_is_written_through_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "out"
    with path.open("wb") as raw:
        stdout = PipeStdout(raw)
        stdout.write(b"abc")
        stdout.flush()
        assert stdout.pending == 0
    assert path.read_bytes() == b"abc"
