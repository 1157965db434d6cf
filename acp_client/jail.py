"""The path jail for plan targets: every file a plan writes stays in its root.

One rule for both sides of the contract: the backend checks every path it
writes, the contract refuses a change path that is not clean
(``FileChange``, ``FileEdit``), and the language server checks where each
target resolves before it sends the editor an edit (a remote backend is a
peer, not a trusted part of the editor).

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


def why_refused(path: str) -> str | None:
    """Why ``path`` is not a clean POSIX path relative to a root, or None
    when it is (no file system look-up)."""
    if not path or path.startswith("/") or _DRIVE.match(path) or "\\" in path or "\0" in path:
        return "not a relative POSIX path"
    parts = path.split("/")
    if ".." in parts:
        return "it climbs out with '..'"
    if any(part.lower() == ".git" for part in parts):
        return "it lies in .git"
    if any(part in ("", ".") for part in parts):
        return "it is not in normal form"
    return None


def check_relative(path: str) -> str:
    """``path`` if it is clean (``why_refused``); ``OutsideRoot`` otherwise."""
    why = why_refused(path)
    if why is not None:
        raise _refuse(path, why)
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
