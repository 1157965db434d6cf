"""Reading a tool's output in a separate, killable process.

Output is untrusted: a user's ``pattern`` can backtrack exponentially, and
even a linear parse of 64 MiB holds the GIL long enough to freeze the event
loop (and with it ``/health``, signals and the language server). So each
parse runs in a process forked from a small fork server: a single-threaded
Python process started once per backend with the parsers imported, so a
fork costs milliseconds and never copies the backend's threads or locks.
(multiprocessing's forkserver would re-run the backend's main script in
every child.) The parse is bounded by what is left of the validation's
timeout: past it the child is killed, and an alarm kills it anyway should
the backend vanish meanwhile.

Protocol on each child's socket (``multiprocessing.connection`` framing):
the child sends its pid; the backend sends (config, process without its
output, root, max_findings, seconds, run id), then each output text in
1 MiB chunks ended by an empty one; the child answers with the findings in batches of
500 as it reads them, so that the backend reads one batch while the child
parses the next, then an empty message, then the verdict without findings
(or an exception). A batch is the findings' JSON (``J``), which the
standard library writes and pydantic reads in C and Rust, or a pickle
(``P``) when JSON cannot carry it (a lone surrogate: storing it fails
later, as an ``unrecorded`` result).

Each child also has a socket back to the fork server: once its verdict is
out, it sends there the files it read (``file_facts``), which the children
forked after it inherit. The fork server reads that with a deadline and a
size bound, and a child that dies meanwhile costs only what it had to tell.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import json
import math
import os
import pickle
import selectors
import signal
import socket
import struct
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp_backend.validation.file_facts import CAPACITY, FileFacts, Learned
from acp_backend.validation.fork_server import SERVER, SERVER_FD_ENV
from acp_client.models import FINDINGS, Finding

if TYPE_CHECKING:  # the validator imports this module
    from acp_backend.validation.config import ValidationConfig
    from acp_backend.validation.locations import FindingWire
    from acp_backend.validation.runner import ProcessOutcome
    from acp_backend.validation.validator import Verdict

_CHUNK = 1024 * 1024  # characters of output per message to the child
_FACTS_HEADER = struct.Struct("!Q")  # the length of what a child tells of the files it read
_FACTS_LIMIT = 2 * CAPACITY  # bytes: a longer message is not read
_FACTS_DEADLINE = 2.0  # seconds the fork server waits for the rest of a message
_LEARN_SLICE = 500  # files the fork server takes in between looks for fork requests
_LEARN_BEFORE_FORK = 0.05  # seconds a fork asked for waits, at most, for facts told before it


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
    *,
    run: str | None = None,
) -> Verdict:
    """``validator.judge(config, process, root, max_findings)`` in a forked
    child; ``ParseTimeout`` after ``budget`` seconds. ``run``: the validation
    run it parses for (``file_facts``: a file read earlier in it is not
    checked again)."""
    try:
        connection = await asyncio.to_thread(SERVER.connect)
        pid = await asyncio.to_thread(connection.recv)
    except (OSError, EOFError) as exc:
        raise ParseCrashed(f"could not start the process reading the output: {exc}") from None
    request = (config, replace(process, stdout="", stderr=""), root, max_findings, budget, run)
    texts = (process.stdout, process.stderr)
    answered = False
    try:
        exchange = asyncio.to_thread(_exchange, connection, request, texts)
        answer = await asyncio.wait_for(exchange, budget)
        answered = not isinstance(answer, ParseCrashed)
    except TimeoutError:
        raise ParseTimeout from None
    finally:
        if not answered:  # timeout or cancellation (an answered child exits by itself)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        connection.close()
    if isinstance(answer, BaseException):
        raise answer
    return cast("Verdict", answer)


def _exchange(connection: Connection, request: tuple[Any, ...], texts: tuple[str, ...]) -> Any:
    try:
        connection.send(request)
        for text in texts:
            for start in range(0, len(text), _CHUNK):
                connection.send_bytes(text[start : start + _CHUNK].encode("utf-8", "surrogatepass"))
            connection.send_bytes(b"")
        findings: list[Finding] = []
        while batch := connection.recv_bytes():
            findings += _read_batch(batch)
        answer = connection.recv()
        if not findings or isinstance(answer, BaseException) or answer.handed_on_void:
            return answer
        kept = tuple(findings)
        return replace(
            answer, findings=kept, file_hashes=_keyed_by_finding_paths(answer.file_hashes, kept)
        )
    except (EOFError, OSError):
        return ParseCrashed("the process reading the output died")


def _keyed_by_finding_paths(
    hashes: dict[str, str], findings: tuple[Finding, ...]
) -> dict[str, str]:
    """``hashes`` keyed by the findings' own path strings where they name the
    same file: the hashes come from another parse (the child's verdict) than
    the findings, and a held result would hold every path twice (~6 bytes a
    finding held, issue 11). A parse in process needs none of this: its
    findings and hashes share the converter's strings. Done on the worker
    thread that reads the batches: 3 ms per 10,000 files on the event loop."""
    if not findings:
        return hashes
    paths = {f.location.path: f.location.path for f in findings if f.location is not None}
    return {paths.get(path, path): digest for path, digest in hashes.items()}


def serve(listener: socket.socket | None = None) -> None:
    """The fork server's main loop: one forked child per connection received,
    and what each child read taken in (``file_facts``) for the next ones, a
    slice at a time between looks for fork requests. A fork asked for waits
    for what was told before it, for ``_LEARN_BEFORE_FORK`` at most: ten
    validators over 10,000 files forked their second pair of parses ~100 ms
    after the first pair told, with ~1,000 files learned, and each of those
    parses spent ~100 ms more reading the other 9,000 than learning them
    all took (~20 ms)."""
    from acp_backend.validation import validator  # imported once, inherited by every fork

    del validator
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
    # Its life is its backend's socket: a Ctrl-C meant for the command that
    # started it (a terminal signals the whole group) would only print a trace.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if listener is None:  # a fresh interpreter: the socket was passed by number
        listener = socket.socket(fileno=int(os.environ.pop(SERVER_FD_ENV)))
    facts = FileFacts()
    told_facts: collections.deque[Learned] = collections.deque()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    while True:
        fork_asked = False
        for key, _ in selector.select(timeout=0 if told_facts else None):
            told = cast("socket.socket", key.fileobj)
            if told is listener:
                fork_asked = True
                continue
            selector.unregister(told)
            with told:
                told_facts.extend(receive_facts(told))
        if not fork_asked:
            _learn(facts, told_facts, _LEARN_SLICE)
            continue
        deadline = time.monotonic() + _LEARN_BEFORE_FORK
        while told_facts and time.monotonic() < deadline:
            _learn(facts, told_facts, _LEARN_SLICE)
        message, fds, _, _ = socket.recv_fds(listener, 1, 1)
        if not message:  # the backend closed its end: it is gone
            # At once, not after freeing every module and schema (~50 ms):
            # until this process ends, the stderr it shares with the backend
            # stays open, and whoever reads the backend's output waits.
            os._exit(0)
        ours, theirs = socket.socketpair()
        if os.fork() == 0:
            # First, what the child inherited (the fork server's modules,
            # schemas and file facts) leaves the collector's view: a
            # collection would walk those objects, writing to each one's
            # header and so copying every page of the fork server's heap
            # it touched. A 10,000-finding parse took 4,600 page faults
            # and ~110 ms; 1,400 and ~60 ms frozen. The child's own
            # objects are collected as usual.
            gc.freeze()
            # The listener and the sockets of children forked before.
            for inherited in [*selector.get_map().values()]:
                cast("socket.socket", inherited.fileobj).close()
            selector.close()
            ours.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            try:
                _child(Connection(fds[0]), theirs, facts)
            finally:
                os._exit(0)
        theirs.close()
        for fd in fds:
            os.close(fd)
        selector.register(ours, selectors.EVENT_READ)


def _learn(facts: FileFacts, told: collections.deque[Learned], count: int) -> None:
    """Take in the first ``count`` entries told (fewer if there are not as many)."""
    facts.learn(told.popleft() for _ in range(min(count, len(told))))


def _child(connection: Connection, server: socket.socket, facts: FileFacts) -> None:
    from acp_backend.validation.validator import judge

    connection.send(os.getpid())
    config, process, root, max_findings, budget, run = connection.recv()
    facts.forked(run)
    signal.alarm(math.ceil(budget) + 1)  # the default action ends the process
    stdout, stderr = _receive_text(connection), _receive_text(connection)
    whole = replace(process, stdout=stdout, stderr=stderr)

    def hand_on(findings: list[FindingWire]) -> None:
        connection.send_bytes(_batch(findings))

    try:
        answer: Verdict | Exception = judge(config, whole, root, max_findings, hand_on, facts=facts)
    except Exception as exc:  # sent back and raised in the backend
        answer = exc
    # The fork server first: the backend may take a while to read the
    # answer, and the parses it starts meanwhile should not read again
    # what this one just read.
    send_facts(server, facts.fresh)
    connection.send_bytes(b"")
    connection.send(answer)
    connection.close()


def send_facts(server: socket.socket, learned: list[Learned]) -> None:
    if learned:
        payload = pickle.dumps(learned, protocol=pickle.HIGHEST_PROTOCOL)
        with contextlib.suppress(OSError):
            server.sendall(_FACTS_HEADER.pack(len(payload)) + payload)


def receive_facts(told: socket.socket) -> list[Learned]:
    """What a child sent of the files it read; nothing when it sent nothing,
    too much, something else, or not all of it in time."""
    told.settimeout(_FACTS_DEADLINE)
    try:
        header = _receive_exactly(told, _FACTS_HEADER.size)
        (length,) = _FACTS_HEADER.unpack(header)
        if length > _FACTS_LIMIT:
            return []
        learned = pickle.loads(_receive_exactly(told, length))
    except (OSError, EOFError, ValueError, pickle.UnpicklingError, struct.error):
        return []
    return learned if isinstance(learned, list) else []


def _receive_exactly(told: socket.socket, size: int) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        count = told.recv_into(view[received:])
        if not count:
            raise EOFError
        received += count
    return bytes(buffer)


def _batch(findings: list[FindingWire]) -> bytes:
    try:
        return b"J" + json.dumps(findings, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return b"P" + pickle.dumps(findings)


def _read_batch(batch: bytes) -> tuple[Finding, ...]:
    if batch[:1] == b"J":
        return FINDINGS.validate_json(batch[1:])
    return FINDINGS.validate_python(pickle.loads(batch[1:]))


def _receive_text(connection: Connection) -> str:
    chunks = []
    while chunk := connection.recv_bytes():
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "surrogatepass")
