"""The line's history: which commit last changed it (``git blame``), or that it is new.

Only when the file lies in a git work tree (a ``.git`` directory, or a
``.git`` file in a linked worktree, above it) and ``git`` is on the PATH;
otherwise there is no history and no error. ``git blame --porcelain -L n,n``
is given the text being inspected (``--contents -``), so an unsaved buffer's
lines are the ones blamed and a line that differs from the last commit says
so. git runs in a process group of its own, at most ``BLAME_TIME_LIMIT``
seconds: then the group is killed and the answer is "no history" (a git
that hung once is not asked again about that repository for
``HUNG_BACKOFF`` seconds). Answers are cached per repository, ``HEAD``
commit, file, content and line: a commit, a checkout or an edit asks again.

git runs from a worker thread (``subprocess``), not through asyncio's
subprocess support: on Python 3.11 a task cancelled while
``create_subprocess_exec`` is starting its process can wait for ever, and
an editor that quits during a hover then left the server unable to exit
(its shutdown cancels every task). A cancelled hover leaves the thread to
finish within the time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import time
from collections import OrderedDict
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from acp_backend.validation.runner import SECRET_ENV
from acp_client.models import LineHistory

log = logging.getLogger(__name__)

BLAME_TIME_LIMIT = 1.0
"""Seconds git may take; the hover's own limit is 3 s."""
HUNG_BACKOFF = 30.0
CACHE_LINES = 4096
UNCOMMITTED = "0" * 40
_HEAD_BYTES = 4096


def work_tree(path: str) -> tuple[str, str] | None:
    """The work tree holding ``path`` and its ``.git`` (a directory, or a
    linked worktree's file), or None."""
    directory = os.path.dirname(path)
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.exists(dot_git):
            return directory, dot_git
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


_GITS: dict[str, str] = {}


def _git(search_path: str) -> str | None:
    """git on ``search_path``, found once per PATH rather than per hover (the
    look-up stats every directory on it); not found is not remembered, so
    a git installed later is seen."""
    found = _GITS.get(search_path) or shutil.which("git", path=search_path)
    if found is not None:
        _GITS[search_path] = found
    return found


def head_commit(dot_git: str) -> str | None:
    """The commit ``HEAD`` names, read from the files (no process), or None
    when it cannot be told (the answer is then not cached)."""
    try:
        git_dir = dot_git
        if os.path.isfile(dot_git):
            pointer = _read(dot_git)
            if not pointer.startswith("gitdir:"):
                return None
            git_dir = os.path.join(os.path.dirname(dot_git), pointer[7:].strip())
        common = git_dir
        if os.path.isfile(os.path.join(git_dir, "commondir")):
            common = os.path.join(git_dir, _read(os.path.join(git_dir, "commondir")).strip())
        head = _read(os.path.join(git_dir, "HEAD")).strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head[4:].strip()
        for base in (git_dir, common):
            loose = os.path.join(base, ref)
            if os.path.isfile(loose):
                return _read(loose).strip() or None
        packed = os.path.join(common, "packed-refs")
        if os.path.isfile(packed):
            with open(packed, encoding="utf-8", errors="replace") as refs:
                for line in refs:
                    commit, _, name = line.strip().partition(" ")
                    if name == ref:
                        return commit
        return None
    except OSError:
        return None


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read(_HEAD_BYTES)


def parse_porcelain(output: str, path: str | None = None) -> LineHistory | None:
    """The history of the one line ``git blame --porcelain`` described
    (``path``: the file's path now, not repeated when the commit's is the same)."""
    lines = output.splitlines()
    if not lines or len(lines[0].split()) < 3:
        return None
    commit = lines[0].split()[0]
    if commit == UNCOMMITTED:
        return LineHistory()
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line.startswith("\t"):
            break
        name, _, value = line.partition(" ")
        fields.setdefault(name, value)
    return LineHistory(
        commit=commit,
        author=fields.get("author", ""),
        authored_at=_when(fields.get("author-time"), fields.get("author-tz")),
        subject=fields.get("summary", ""),
        path=None if fields.get("filename") in (None, path) else fields.get("filename"),
    )


def _when(seconds: str | None, zone: str | None) -> datetime | None:
    try:
        moment = datetime.fromtimestamp(int(seconds or ""), UTC)
    except (ValueError, OverflowError, OSError):
        return None
    if zone and len(zone) == 5 and zone[0] in "+-" and zone[1:].isdigit():
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:]))
        moment = moment.astimezone(timezone(-offset if zone[0] == "-" else offset))
    return moment


class History:
    """Blame answers, cached; repositories whose git hung, for a while."""

    def __init__(self) -> None:
        self._lines: OrderedDict[tuple[str, ...], LineHistory | None] = OrderedDict()
        self._hung: dict[str, float] = {}

    async def line(self, file: str, text: str, sha256: str | None, line: int) -> LineHistory | None:
        """Who last changed ``line`` of ``file``, whose content is ``text``."""
        found = work_tree(file)
        git = _git(os.environ.get("PATH", os.defpath))
        if found is None or git is None:
            return None
        root, dot_git = found
        if time.monotonic() < self._hung.get(root, 0.0):
            return None
        head = head_commit(dot_git)
        relative = Path(file[len(root) :].lstrip(os.sep)).as_posix()
        key = (root, head, relative, sha256, str(line)) if head and sha256 else None
        if key is not None and key in self._lines:
            self._lines.move_to_end(key)
            return self._lines[key]
        answer = await self._blame(git, root, relative, text, line)
        if answer is _HUNG:
            self._hung[root] = time.monotonic() + HUNG_BACKOFF
            return None
        found_history = answer if isinstance(answer, LineHistory) else None
        if key is not None:
            self._lines[key] = found_history
            if len(self._lines) > CACHE_LINES:
                self._lines.popitem(last=False)
        return found_history

    async def _blame(
        self, git: str, root: str, path: str, text: str, line: int
    ) -> LineHistory | object | None:
        command = [git, "-C", root, "--no-pager", "blame", "--porcelain"]
        command += ["-L", f"{line + 1},{line + 1}", "--contents", "-", "--", path]
        data = text.encode("utf-8", "surrogatepass")
        return await asyncio.to_thread(_run_blame, command, data, root, path)


def _run_blame(
    command: list[str], data: bytes, root: str, path: str
) -> LineHistory | object | None:
    env = {name: value for name, value in os.environ.items() if name not in SECRET_ENV}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # so that everything it started can be killed
        )
    except OSError as exc:
        log.debug("git blame did not start: %s", exc)
        return None
    try:
        output, _ = process.communicate(data, timeout=BLAME_TIME_LIMIT)
    except subprocess.TimeoutExpired:
        log.warning("git blame took over %s s in %s: no history", BLAME_TIME_LIMIT, root)
        _kill(process)
        return _HUNG
    except OSError as exc:
        log.debug("git blame failed: %s", exc)
        _kill(process)
        return None
    if process.returncode != 0:
        return None  # untracked, no commit yet, beyond the end...
    return parse_porcelain(output.decode("utf-8", "replace"), path)


_HUNG = object()


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)  # the group leader's pid is the group's id
        else:
            process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.communicate(timeout=1.0)  # reaped, its pipes closed
