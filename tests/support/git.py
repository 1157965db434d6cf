"""Real git repositories for tests of a line's history (``git blame``)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

AUTHOR = "Ada Lovelace"
EMAIL = "ada@example.test"


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": AUTHOR,
        "GIT_AUTHOR_EMAIL": EMAIL,
        "GIT_COMMITTER_NAME": AUTHOR,
        "GIT_COMMITTER_EMAIL": EMAIL,
        "GIT_AUTHOR_DATE": "2026-11-30T09:15:00+01:00",
        "GIT_COMMITTER_DATE": "2026-11-30T09:15:00+01:00",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-C", str(root), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def committed(root: Path, message: str) -> str:
    """Every file under ``root`` committed (a repository made first if need be):
    the commit's hash."""
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def hanging_git(directory: Path, seconds: float = 30) -> Path:
    """A ``git`` that hangs (its own child holding the pipes), in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    fake = directory / "git"
    fake.write_text(f"#!/bin/sh\nsleep {seconds}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory
