"""Reading a tool's output in a separate, killable process.

Output is untrusted: a user's ``pattern`` can backtrack exponentially, and
even a linear parse of 64 MiB holds the GIL for long enough to freeze the
event loop (and with it ``/health``, signals and the language server).
So the parse runs in a process forked from a forkserver (started once,
single-threaded, with the parsers already imported: a fork costs
milliseconds), bounded by what is left of the validation's timeout, and
killed when that runs out or the run is cancelled.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

_CONTEXT = multiprocessing.get_context("forkserver")
# "__main__" too: otherwise every child would re-run the main script to
# recreate it (multiprocessing's spawn rules); preloaded, it is done once.
_CONTEXT.set_forkserver_preload(["__main__", "acp_backend.validation.validator"])


class ParseTimeout(Exception):
    """The parse did not finish within its budget; its process was killed."""


class ParseCrashed(Exception):
    """The parsing process died without an answer (e.g. out of memory)."""


async def judge_isolated(
    config: Any, process: Any, root: Path, max_findings: int, budget: float
) -> Any:
    """``validator.judge(config, process, root, max_findings)`` in a child
    process; ``ParseTimeout`` after ``budget`` seconds."""
    receiving, sending = _CONTEXT.Pipe(duplex=False)
    worker = _CONTEXT.Process(
        target=_work, args=(sending, config, process, root, max_findings), daemon=True
    )
    try:
        # Starting sends the arguments (the whole output) down a pipe: not on the loop.
        try:
            await asyncio.to_thread(worker.start)
        except (OSError, RuntimeError) as exc:
            raise ParseCrashed(f"could not start the process reading the output: {exc}") from None
        sending.close()
        try:
            answer = await asyncio.wait_for(asyncio.to_thread(_receive, receiving), budget)
        except TimeoutError:
            raise ParseTimeout from None
    finally:
        if worker.pid is not None:
            worker.kill()  # a no-op once it has exited; unblocks the receiving thread
            await asyncio.to_thread(worker.join)
        receiving.close()
        sending.close()
    if isinstance(answer, BaseException):
        raise answer
    return answer


def _receive(connection: Connection) -> Any:
    try:
        return connection.recv()
    except (EOFError, OSError):
        return ParseCrashed("the process reading the output died")


def _work(connection: Connection, config: Any, process: Any, root: Path, max_findings: int) -> None:
    from acp_backend.validation.validator import judge

    try:
        answer: Any = judge(config, process, root, max_findings)
    except Exception as exc:  # sent back and raised in the backend, traceback logged there
        answer = exc
    connection.send(answer)
    connection.close()
