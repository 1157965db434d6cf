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
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # the validator imports this module
    from acp_backend.validation.config import ValidationConfig
    from acp_backend.validation.runner import ProcessOutcome
    from acp_backend.validation.validator import Verdict

_CHUNK = 1024 * 1024  # characters of output per message to the child
_BATCH = 500  # findings per message back
_CONTEXT = multiprocessing.get_context("forkserver")
# "__main__" too: otherwise every child would re-run the main script to
# recreate it (multiprocessing's spawn rules); preloaded, it is done once.
_CONTEXT.set_forkserver_preload(["__main__", "acp_backend.validation.validator"])


class ParseTimeout(Exception):
    """The parse did not finish within its budget; its process was killed."""


class ParseCrashed(Exception):
    """The parsing process died without an answer (e.g. out of memory)."""


async def judge_isolated(
    config: ValidationConfig,
    process: ProcessOutcome,
    root: Path,
    max_findings: int,
    budget: float,
) -> Verdict:
    """``validator.judge(config, process, root, max_findings)`` in a child
    process; ``ParseTimeout`` after ``budget`` seconds."""
    ours, theirs = _CONTEXT.Pipe()
    # The output goes down the pipe in chunks (below), not as an argument:
    # pickling 64 MiB in one piece would hold the GIL for a noticeable time.
    bare = replace(process, stdout="", stderr="")
    worker = _CONTEXT.Process(
        target=_work, args=(theirs, config, bare, root, max_findings), daemon=True
    )
    try:
        try:
            await asyncio.to_thread(worker.start)
        except (OSError, RuntimeError) as exc:
            raise ParseCrashed(f"could not start the process reading the output: {exc}") from None
        theirs.close()
        exchange = asyncio.to_thread(_exchange, ours, (process.stdout, process.stderr))
        try:
            answer = await asyncio.wait_for(exchange, budget)
        except TimeoutError:
            raise ParseTimeout from None
    finally:
        if worker.pid is not None:
            worker.kill()  # a no-op once it has exited; unblocks the exchanging thread
            await asyncio.to_thread(worker.join)
        ours.close()
        theirs.close()
    if isinstance(answer, BaseException):
        raise answer
    return cast("Verdict", answer)


def _exchange(connection: Connection, texts: tuple[str, ...]) -> Any:
    """Send each text in chunks (an empty one ends it), then receive the
    answer: a verdict, then its findings in batches (None ends them)."""
    try:
        for text in texts:
            for start in range(0, len(text), _CHUNK):
                connection.send_bytes(text[start : start + _CHUNK].encode("utf-8", "surrogatepass"))
            connection.send_bytes(b"")
        answer = connection.recv()
        findings: list[Any] = []
        while (batch := connection.recv()) is not None:
            findings += batch
        return replace(answer, findings=tuple(findings)) if findings else answer
    except (EOFError, OSError):
        return ParseCrashed("the process reading the output died")


def _receive_text(connection: Connection) -> str:
    chunks = []
    while chunk := connection.recv_bytes():
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "surrogatepass")


def _work(
    connection: Connection,
    config: ValidationConfig,
    process: ProcessOutcome,
    root: Path,
    max_findings: int,
) -> None:
    from acp_backend.validation.validator import judge

    stdout, stderr = _receive_text(connection), _receive_text(connection)
    try:
        answer: Any = judge(
            config, replace(process, stdout=stdout, stderr=stderr), root, max_findings
        )
    except Exception as exc:  # sent back and raised in the backend, traceback logged there
        answer = exc
    if isinstance(answer, Exception):
        connection.send(answer)
    else:  # findings in batches: unpickling 10,000 at once would hold the GIL too long
        connection.send(replace(answer, findings=()))
        for start in range(0, len(answer.findings), _BATCH):
            connection.send(answer.findings[start : start + _BATCH])
    connection.send(None)
    connection.close()
