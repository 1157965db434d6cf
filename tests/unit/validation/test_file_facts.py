"""Files read by one parse, used by the next (``file_facts``): only while the
file is the one that was read, and shared through the real fork server."""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import os
import pickle
import signal
import socket
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from acp_backend.validation import isolation
from acp_backend.validation.config import ValidationConfig
from acp_backend.validation.file_facts import SETTLED_NS, FileFacts, Learned, stamp_of
from acp_backend.validation.locations import FindingConverter
from acp_backend.validation.raw import RawFinding
from acp_backend.validation.runner import Ending, ProcessOutcome
from acp_backend.validation.validator import IN_PROCESS_OUTPUT, judge_bounded
from tests.unit.validation.validation_helpers import declared

OTHER = "0" * 64  # a digest no real file here has: shows the entry was used


def learned(path: Path, data: bytes = b"other = 1\n", run: str | None = None) -> Learned:
    return (str(path), stamp_of(os.lstat(path)), OTHER, data, run)


def convert(root: Path, facts: FileFacts, *paths: str) -> FindingConverter:
    converter = FindingConverter(str(root), facts=facts)
    for path in paths:
        raw = RawFinding("m", path=path, line=0)
        assert converter.admits(raw)
        converter.convert(raw)
    return converter


def settled(facts: FileFacts) -> None:
    """Files written before this are old enough to be noted."""
    time.sleep(SETTLED_NS / 1e9 + 0.02)
    facts.forked()


def test_a_file_as_it_was_learned_is_not_read_again(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a = 1\n")
    facts = FileFacts()
    facts.learn([learned(tmp_path / "a.py")])
    converter = convert(tmp_path, facts, "a.py")
    assert converter.file_hashes == {"a.py": OTHER}
    assert converter.known == 1


def test_a_file_changed_since_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("a = 1\n")
    facts = FileFacts()
    facts.learn([learned(path)])
    path.write_text("b = 2\n")  # the same size: the ctime (and mtime) tell
    converter = convert(tmp_path, facts, "a.py")
    assert converter.file_hashes == {"a.py": hashlib.sha256(b"b = 2\n").hexdigest()}
    assert converter.known == 0


def test_a_file_replaced_by_a_link_is_not_taken_from_the_facts(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 2\n")
    facts = FileFacts()
    facts.learn([learned(tmp_path / "a.py")])
    (tmp_path / "a.py").unlink()
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    converter = convert(tmp_path, facts, "a.py")
    assert converter.file_hashes == {"a.py": hashlib.sha256(b"b = 2\n").hexdigest()}
    assert facts.fresh == []  # a link's target is not noted under the link's name


def test_only_files_that_had_settled_when_read_are_noted(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("old = 1\n")
    facts = FileFacts()
    settled(facts)
    (tmp_path / "new.py").write_text("new = 1\n")  # changed as the parse began
    convert(tmp_path, facts, "old.py", "new.py")
    assert [entry[0] for entry in facts.fresh] == [str(tmp_path / "old.py")]
    (path, stamp, digest, data, run) = facts.fresh[0]
    assert (stamp, digest, data, run) == (
        stamp_of(os.lstat(path)),
        hashlib.sha256(b"old = 1\n").hexdigest(),
        b"old = 1\n",
        None,
    )


def test_within_a_run_a_file_is_taken_as_it_was_first_read(tmp_path: Path) -> None:
    """A parse of the run that read the file takes it as read then, without
    looking again; a parse of another run (or of none) looks, and reads the
    file again when it changed."""
    path = tmp_path / "a.py"
    path.write_text("a = 1\n")
    facts = FileFacts()
    facts.learn([learned(path, run="run-1")])
    path.write_text("b = 2\n")
    facts.forked("run-1")
    assert convert(tmp_path, facts, "a.py").file_hashes == {"a.py": OTHER}
    for other in ("run-2", None):
        facts.forked(other)
        converter = convert(tmp_path, facts, "a.py")
        assert converter.file_hashes == {"a.py": hashlib.sha256(b"b = 2\n").hexdigest()}
        assert converter.known == 0


def test_what_a_parse_reads_is_told_with_its_run(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a = 1\n")
    facts = FileFacts()
    settled(facts)
    facts.forked("run-1")
    convert(tmp_path, facts, "a.py")
    assert [entry[4] for entry in facts.fresh] == ["run-1"]


def test_the_facts_are_bounded_by_heap_the_oldest_going_first(tmp_path: Path) -> None:
    facts = FileFacts(capacity=3000)
    for n in range(5):
        (tmp_path / f"f{n}.py").write_text(f"f = {n}  # {'-' * 500}\n")  # ~1,400 bytes of heap
        facts.learn([learned(tmp_path / f"f{n}.py", (tmp_path / f"f{n}.py").read_bytes())])
    assert len(facts) == 2
    assert convert(tmp_path, facts, "f4.py").known == 1
    assert convert(tmp_path, facts, "f0.py").known == 0


def test_what_a_child_tells_is_read_whole_or_not_at_all() -> None:
    ours, theirs = socket.socketpair()
    entry: Learned = ("/x.py", (1, 2, 3, 4, 5), OTHER, b"x", "run-1")
    isolation.send_facts(theirs, [entry])
    theirs.close()
    assert isolation.receive_facts(ours) == [entry]
    for broken in (
        b"",  # died before telling anything
        isolation._FACTS_HEADER.pack(100) + b"short",  # died in the middle
        isolation._FACTS_HEADER.pack(2**62),  # claims too much
        isolation._FACTS_HEADER.pack(4) + b"junk",  # not a pickle
        isolation._FACTS_HEADER.pack(4) + pickle.dumps(1)[:4],
    ):
        ours, theirs = socket.socketpair()
        theirs.sendall(broken)
        theirs.close()
        assert isolation.receive_facts(ours) == []


async def settled_files_and_their_findings(
    root: Path, prefix: str, count: int
) -> tuple[list[str], ValidationConfig, ProcessOutcome]:
    """``count`` files settled (``SETTLED_NS``), and a tool's output with a
    finding in each, long enough to be parsed in a forked child."""
    files = [f"{prefix}{n}.py" for n in range(count)]
    for name in files:
        (root / name).write_text(f"{name[:-3]} = 'é'\n")
    await asyncio.sleep(SETTLED_NS / 1e9 + 0.02)
    line_size = IN_PROCESS_OUTPUT // count + 1
    output = "".join(f"{name}:1:1: error: e {'x' * line_size}\n" for name in files)
    assert len(output) > IN_PROCESS_OUTPUT
    return files, declared('format = "pattern"'), ProcessOutcome(Ending.EXITED, 1, output)


async def test_a_parse_tells_the_fork_server_before_its_answer_is_read(tmp_path: Path) -> None:
    """The next parses are forked while the backend still reads this one's
    verdict (its ``file_hashes`` alone can be more than a socket holds):
    what the parse read must reach the fork server first. The child's side
    runs here in a thread, over the same protocol, and the verdict is left
    unread until the fork server's end has heard it all."""
    files, config, process = await settled_files_and_their_findings(tmp_path, "t", 5000)
    ours, theirs = multiprocessing.Pipe()
    told, server = socket.socketpair()
    child = threading.Thread(
        target=isolation._child, args=(theirs, server, FileFacts()), daemon=True
    )
    heard: list[list[Learned]] = []  # the fork server's end, read as the fork server does
    fork_server = threading.Thread(
        target=lambda: heard.append(isolation.receive_facts(told)), daemon=True
    )
    child.start()
    try:
        assert ours.recv() == os.getpid()
        ours.send((config, replace(process, stdout=""), tmp_path, 10_000, 60.0, "run-1"))
        fork_server.start()
        for text in (process.stdout, ""):
            ours.send_bytes(text.encode())
            ours.send_bytes(b"")
        while ours.recv_bytes():  # the findings, as the backend reads them
            pass
        fork_server.join(10)  # the verdict not read yet
        (learned,) = heard
        assert sorted(entry[0] for entry in learned) == sorted(str(tmp_path / f) for f in files)
        assert {entry[4] for entry in learned} == {"run-1"}
        assert len(ours.recv().file_hashes) == len(files)
    finally:
        child.join(10)
        signal.alarm(0)  # the child's side set one for its budget


async def test_parses_after_the_first_take_the_files_it_read_from_the_fork_server(
    tmp_path: Path,
) -> None:
    files, config, process = await settled_files_and_their_findings(tmp_path, "m", 50)

    async def parse() -> tuple[int, dict[str, str]]:
        verdict = await judge_bounded(config, process, tmp_path, 1000, datetime.now(UTC))
        # Each path held once: the hashes are keyed by the findings' own strings.
        paths = {id(f.location.path) for f in verdict.findings if f.location}
        assert {id(path) for path in verdict.file_hashes} == paths
        return verdict.known_files, verdict.file_hashes

    await parse()  # the fork server may know these files from an earlier test: no matter
    deadline = time.monotonic() + 5
    known, hashes = await parse()
    while known < len(files) and time.monotonic() < deadline:  # the last child's message
        known, hashes = await parse()
    assert known == len(files)
    assert hashes[files[0]] == hashlib.sha256(f"{files[0][:-3]} = 'é'\n".encode()).hexdigest()
    (tmp_path / files[0]).write_text("changed = 1\n")
    known, hashes = await parse()
    assert known == len(files) - 1
    assert hashes[files[0]] == hashlib.sha256(b"changed = 1\n").hexdigest()


async def test_a_run_takes_a_file_as_its_first_parse_read_it_through_the_fork_server(
    tmp_path: Path,
) -> None:
    files, config, process = await settled_files_and_their_findings(tmp_path, "r", 20)

    async def parse(run: str) -> tuple[int, dict[str, str]]:
        verdict = await judge_bounded(config, process, tmp_path, 1000, datetime.now(UTC), run=run)
        return verdict.known_files, verdict.file_hashes

    _, first = await parse("run-1")  # reads every file, and tells the fork server
    # Told before the answer, and taken in before the next fork: the very
    # next parse knows every file (no retry).
    known, _ = await parse("run-1")
    assert known == len(files)
    (tmp_path / files[0]).write_text("changed = 1\n")
    known, hashes = await parse("run-1")
    assert known == len(files) and hashes == first  # the run's first reading stands
    known, hashes = await parse("run-2")  # another run looks again
    assert known == len(files) - 1
    assert hashes[files[0]] == hashlib.sha256(b"changed = 1\n").hexdigest()


def test_a_file_learned_again_with_the_same_stamp_keeps_its_entry(tmp_path: Path) -> None:
    """Two parses at once read the same files: the second telling is skipped."""
    path = tmp_path / "a.py"
    path.write_text("a = 1\n")
    facts = FileFacts()
    facts.learn([learned(path)])
    facts.learn([(str(path), stamp_of(os.lstat(path)), "1" * 64, b"a = 1\n", "run-2")])
    assert convert(tmp_path, facts, "a.py").file_hashes == {"a.py": OTHER}
    # Read again in a later run: taken as read in that one from now on.
    path.write_text("b = 2\n")
    facts.forked("run-2")
    assert convert(tmp_path, facts, "a.py").file_hashes == {"a.py": OTHER}
