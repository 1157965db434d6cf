"""The path jail for plan targets: every file a plan writes stays in its root.

Refused: empty, absolute or drive paths, backslashes, ``..``, anything in
``.git``, and a path that (symlinks resolved) leads out of the root or into
its ``.git``. A symlink that stays inside is followed: the file it points
to is the one written.
"""

from __future__ import annotations

import os
import re

from acp_client.errors import OutsideRoot
from acp_client.paths import is_within, relative_to

_DRIVE = re.compile(r"^[A-Za-z]:")


def _refuse(path: str, why: str) -> OutsideRoot:
    return OutsideRoot(
        f"plan target {path!r} refused: {why}",
        remedy="a plan may only change files inside its resource, outside .git",
    )


def check_relative(path: str) -> str:
    """``path`` if it is a clean POSIX path relative to a root (no file system look-up)."""
    if not path or path.startswith("/") or _DRIVE.match(path) or "\\" in path or "\0" in path:
        raise _refuse(path, "not a relative POSIX path")
    parts = path.split("/")
    if ".." in parts:
        raise _refuse(path, "it climbs out with '..'")
    if any(part.lower() == ".git" for part in parts):
        raise _refuse(path, "it lies in .git")
    if any(part in ("", ".") for part in parts):
        raise _refuse(path, "it is not in normal form")
    return path


def jailed(root: str, path: str) -> str:
    """The absolute real path ``path`` names under ``root``; ``OutsideRoot`` if it escapes."""
    check_relative(path)
    real_root = os.path.realpath(root)
    resolved = os.path.realpath(os.path.join(real_root, *path.split("/")))
    if not is_within(resolved, real_root):
        raise _refuse(path, "a symlink leads out of the resource root")
    inside = relative_to(resolved, real_root)
    if inside == "." or any(part.lower() == ".git" for part in inside.split("/")):
        raise _refuse(path, "a symlink leads into .git or onto the root")
    return resolved
