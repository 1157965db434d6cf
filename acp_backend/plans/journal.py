"""All-or-nothing writes of a change set, surviving a crash at any point.

1. Under the data dir's apply lock, a journal (``plans/journal/<plan>.json``)
   lists every target and the temporary file that will replace it.
2. Each new content is written to its temporary file *beside* its target
   (same file system, so the rename is atomic), flushed to disk, and given
   the target's permissions (``stage``).
3. The caller commits: it records the plan ``applied`` in the database, one
   SQLite transaction. That commit is the point of no return.
4. Each temporary file is renamed over its target; removals are unlinked
   (``roll_forward``); the journal is deleted (``finish``).

On the next start, ``recover`` asks, per journal, whether its plan was
committed: if so it finishes the renames (idempotent), else it rolls back
(removes the temporary files and any directory it created). A live apply in
another process holds the lock, so recovery never races it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from acp_client.errors import InvalidState
from acp_client.jail import jailed
from acp_client.models import ChangeKind, FileChange

log = logging.getLogger(__name__)

NEW_FILE_MODE = 0o644


@dataclass(frozen=True)
class Op:
    target: str  # absolute real path
    tmp: str | None  # the staged new content; None: remove the target


@dataclass(frozen=True)
class Journal:
    plan_id: str
    ops: tuple[Op, ...]
    dirs: tuple[str, ...]  # created for new files, outermost first


def journal_dir(data_dir: Path) -> Path:
    return data_dir / "plans" / "journal"


if sys.platform == "win32":
    import msvcrt

    def _lock(handle: BinaryIO, wait: bool) -> bool:
        try:  # LK_LOCK retries for about 10 s, then raises
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)
        except OSError:
            if wait:
                raise
            return False
        return True

    def _unlock(handle: BinaryIO) -> None:
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(handle: BinaryIO, wait: bool) -> bool:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(handle: BinaryIO) -> None:
        fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def apply_lock(data_dir: Path, *, wait: bool = True) -> Iterator[bool]:
    """The data dir's apply lock, across processes; released if the holder dies.
    Yields False when ``wait`` is off and another process holds it."""
    folder = journal_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / "apply.lock", "a+b") as handle:
        if not _lock(handle, wait):
            yield False
            return
        try:
            yield True
        finally:
            _unlock(handle)


def _ops(root: str, plan_id: str, changes: Sequence[FileChange]) -> list[tuple[Op, FileChange]]:
    ops = []
    for change in changes:
        target = jailed(root, change.path)
        if change.kind is ChangeKind.DELETE:
            ops.append((Op(target, None), change))
            continue
        folder, name = os.path.split(target)
        ops.append((Op(target, os.path.join(folder, f".{name}.acp-{plan_id}.tmp")), change))
        if change.old_path:
            ops.append((Op(jailed(root, change.old_path), None), change))
    return ops


def _missing_dirs(ops: Sequence[Op]) -> list[str]:
    missing: list[str] = []
    for op in ops:
        if op.tmp is None:
            continue
        folder = os.path.dirname(op.target)
        chain = []
        while not os.path.isdir(folder) and folder not in missing:
            chain.append(folder)
            folder = os.path.dirname(folder)
        missing += reversed(chain)
    return missing


def _mode(change: FileChange, root: str) -> int:
    source = jailed(root, change.old_path or change.path)
    try:
        mode = stat.S_IMODE(os.stat(source).st_mode)
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    if change.executable:
        return mode | (mode & 0o444) >> 2
    return mode & ~0o111


def stage(data_dir: Path, root: str, plan_id: str, changes: Sequence[FileChange]) -> Journal:
    """Journal and stage ``changes`` under ``root`` (call under ``apply_lock``).
    Nothing is visible until ``roll_forward``."""
    planned = _ops(root, plan_id, changes)
    ops = tuple(op for op, _ in planned)
    journal = Journal(plan_id, ops, tuple(_missing_dirs(ops)))
    _write_journal(_journal_path(data_dir, plan_id), journal)
    try:
        for folder in journal.dirs:
            os.mkdir(folder)
        for op, change in planned:
            if op.tmp is not None and change.new_text is not None:
                _stage(op.tmp, change.new_text.encode("utf-8"), _mode(change, root))
    except BaseException:
        roll_back(data_dir, journal)
        raise
    return journal


def _journal_path(data_dir: Path, plan_id: str) -> Path:
    return journal_dir(data_dir) / f"{plan_id}.json"


def finish(data_dir: Path, plan_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_journal_path(data_dir, plan_id))


def recover(data_dir: Path, committed: Callable[[str], bool]) -> list[str]:
    """Settle the journals a crash left (call under ``apply_lock``): forward
    when ``committed(plan_id)``, else back. Returns the plans rolled forward."""
    forward = []
    folder = journal_dir(data_dir)
    if not folder.is_dir():
        return []
    for path in sorted(folder.glob("*.json")):
        try:
            journal = _read_journal(path)
        except InvalidState as exc:  # keep it for a person; the backend still starts
            log.error("%s", exc)
            continue
        if committed(journal.plan_id):
            roll_forward(journal)
            forward.append(journal.plan_id)
        else:
            roll_back(data_dir, journal)
        finish(data_dir, journal.plan_id)
    return forward


def roll_forward(journal: Journal) -> None:
    """Make the staged contents visible: rename each over its target, unlink removals."""
    folders = set()
    for op in journal.ops:
        if op.tmp is not None:
            if os.path.exists(op.tmp):
                os.replace(op.tmp, op.target)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(op.target)
        folders.add(os.path.dirname(op.target))
    for folder in folders:
        _fsync_dir(folder)


def roll_back(data_dir: Path, journal: Journal) -> None:
    """Undo ``stage``: remove the staged files, the directories made, the journal."""
    for op in journal.ops:
        if op.tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(op.tmp)
    for folder in reversed(journal.dirs):
        with contextlib.suppress(OSError):  # not empty (someone else's file), or gone
            os.rmdir(folder)
    finish(data_dir, journal.plan_id)


def _stage(tmp: str, data: bytes, mode: int) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_journal(path: Path, journal: Journal) -> None:
    body = {
        "plan_id": journal.plan_id,
        "ops": [{"target": op.target, "tmp": op.tmp} for op in journal.ops],
        "dirs": list(journal.dirs),
    }
    tmp = path.with_suffix(".tmp")
    _stage(str(tmp), json.dumps(body).encode("utf-8"), 0o600)
    os.replace(tmp, path)
    _fsync_dir(str(path.parent))


def _read_journal(path: Path) -> Journal:
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        return Journal(
            plan_id=body["plan_id"],
            ops=tuple(Op(op["target"], op["tmp"]) for op in body["ops"]),
            dirs=tuple(body["dirs"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidState(
            f"the apply journal {path} is unreadable: {exc}",
            remedy="inspect the files it names, then delete it",
        ) from exc


def _fsync_dir(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
