"""Sandboxes: a plan's private copy of its resource, where a fix command may run.

For a resource inside a git checkout the sandbox is a detached ``git
worktree`` at ``HEAD``, brought up to the working tree's state (modified,
deleted and untracked-but-not-ignored files); otherwise it is a copy that
skips caches and virtual environments. Either way it lives under the data
dir, and ``files`` lists what a diff compares: git's view of the files when
there is git (ignored files never enter a plan), a walk otherwise.
Everything here blocks: callers on the event loop use a thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from acp_client.errors import PlanError

SKIPPED_DIRS = frozenset(
    {".git", "__pycache__", ".ruff_cache", ".mypy_cache", ".pytest_cache", "node_modules", ".venv"}
)
GIT_TIMEOUT = 120.0


@dataclass(frozen=True)
class Sandbox:
    root: str  # the resource's files, as the resource root sees them
    checkout: str  # the directory made (a worktree's top, or the copy)
    git: bool  # a git worktree (else a copy)


def _git(cwd: str, *args: str) -> str | None:
    """``git args`` output, or None when git is missing or fails."""
    try:
        done = subprocess.run(
            ("git", *args),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_top(root: str) -> str | None:
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or _git(root, "rev-parse", "--verify", "-q", "HEAD") is None:
        return None  # not a checkout, or one without a commit to branch from
    return os.path.realpath(top.strip())


def create_sandbox(resource_root: str, checkout: Path) -> Sandbox:
    """A sandbox of ``resource_root`` at ``checkout`` (which must not exist)."""
    checkout.parent.mkdir(parents=True, exist_ok=True)
    real_root = os.path.realpath(resource_root)
    top = _git_top(real_root)
    if top is None:
        shutil.copytree(
            real_root, checkout, symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED_DIRS)
        )
        return Sandbox(str(checkout), str(checkout), git=False)
    if _git(top, "worktree", "add", "--detach", str(checkout), "HEAD") is None:
        raise PlanError(f"git could not make a worktree of {top} at {checkout}")
    root = os.path.normpath(os.path.join(checkout, os.path.relpath(real_root, top)))
    try:
        _catch_up(real_root, root)
    except BaseException:
        remove_sandbox(str(checkout))
        raise
    return Sandbox(root, str(checkout), git=True)


def _listed(root: str) -> list[str]:
    """What git considers the files of ``root``: tracked and untracked, not ignored."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is None:
        raise PlanError(f"git could not list the files of {root}")
    return sorted({path for path in listed.split("\0") if path})


def _catch_up(resource_root: str, sandbox_root: str) -> None:
    """Give the worktree the resource's uncommitted state."""
    for path in _listed(resource_root):
        source = os.path.join(resource_root, path)
        target = os.path.join(sandbox_root, path)
        if not os.path.lexists(source):
            if os.path.lexists(target):
                os.unlink(target)  # deleted in the working tree, not yet committed
        elif _digest(source) != _digest(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)


def files(root: str, git: bool) -> dict[str, str]:
    """sha256 of every regular file under ``root`` a plan may change, by relative path."""
    hashes = {}
    for path in _listed(root) if git else _walk(root):
        if SKIPPED_DIRS.intersection(path.split("/")[:-1]):
            continue  # caches a tool left, even where no .gitignore names them
        digest = _digest(os.path.join(root, path))
        if digest is not None:
            hashes[path] = digest
    return hashes


def _walk(root: str) -> list[str]:
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [name for name in dirs if name not in SKIPPED_DIRS]
        relative = os.path.relpath(folder, root)
        found += [name if relative == "." else f"{relative}/{name}" for name in names]
    return [path.replace(os.sep, "/") for path in found]


def _digest(path: str) -> str | None:
    """sha256 of a regular file; None for anything else (absent, symlink, device)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def remove_sandbox(checkout: str) -> None:
    """Remove a sandbox's directory, and its worktree registration if it is one."""
    repository = None
    if os.path.isfile(os.path.join(checkout, ".git")):
        common = _git(checkout, "rev-parse", "--git-common-dir")
        if common is not None:
            repository = os.path.dirname(os.path.realpath(os.path.join(checkout, common.strip())))
            if _git(repository, "worktree", "remove", "--force", checkout) is not None:
                return
    shutil.rmtree(checkout, ignore_errors=True)
    if repository is not None:
        _git(repository, "worktree", "prune")


def disk_use(checkout: Path | str) -> int:
    """Bytes the files under ``checkout`` take (symlinks not followed)."""
    total = 0
    for folder, _, names in os.walk(checkout):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total
