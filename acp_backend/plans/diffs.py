"""Unified diffs as ``git diff`` writes them: parse, apply, render.

Understood: ``diff --git`` headers with new/deleted files, renames (with or
without hunks) and mode changes; plain ``---``/``+++`` diffs; ``a/``/``b/``
prefixes; quoted paths; ``\\ No newline at end of file``. Binary patches,
symlinks and submodules are refused. Lines split at ``\\n`` only, so a CRLF
file keeps its ``\\r``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"
DEV_NULL = "/dev/null"
_NOT_FILES = frozenset({"120000", "160000"})  # git's modes of a symlink and a submodule
_MODE_LINES = ("new file mode ", "deleted file mode ", "old mode ", "new mode ", "index ")


class PatchError(ValueError):
    """A diff that cannot be read, or does not apply to the file as it is."""


@dataclass(frozen=True)
class HunkLine:
    op: str  # " ", "-" or "+"
    text: str
    newline: bool = True


@dataclass
class Hunk:
    old_start: int  # 1-based (0 when the hunk adds to an empty file)
    old_count: int
    new_count: int
    lines: list[HunkLine] = field(default_factory=list)

    def side(self, ops: str) -> list[str]:
        return [line.text + ("\n" if line.newline else "") for line in self.lines if line.op in ops]


@dataclass
class FilePatch:
    old_path: str | None  # None: the file is created
    new_path: str | None  # None: the file is deleted
    hunks: list[Hunk] = field(default_factory=list)
    new_mode: str | None = None  # "100755" etc., when the diff says

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def _unquote(raw: str) -> str:
    """A path as git prints it: C-quoted (octal UTF-8 escapes) when unusual."""
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        escaped = raw[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        return escaped.encode("latin-1").decode("utf-8")
    return raw


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path


def _header_path(raw: str, prefix: str) -> str | None:
    """The path of a ``---``/``+++`` line (a tab ends it: ``diff -u`` adds a date)."""
    path = _unquote(raw.split("\t", 1)[0].rstrip())
    return None if path == DEV_NULL else _strip_prefix(path, prefix)


def _git_header_paths(rest: str) -> tuple[str, str] | None:
    """``a/X b/X`` of a ``diff --git`` line, when it can be split unambiguously."""
    if rest.startswith('"'):
        end = rest.index('"', 1)
        return _strip_prefix(_unquote(rest[: end + 1]), "a/"), _strip_prefix(
            _unquote(rest[end + 2 :]), "b/"
        )
    half = (len(rest) - 1) // 2
    old, new = rest[:half], rest[half + 1 :]
    if rest[half] == " " and old[2:] == new[2:]:
        return _strip_prefix(old, "a/"), _strip_prefix(new, "b/")
    return None


def parse_diff(text: str) -> list[FilePatch]:
    """Every file patch in ``text``, in order."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            paths = _git_header_paths(line[len("diff --git ") :])
            current = FilePatch(*(paths or (None, None)))
            patches.append(current)
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _header_path(line[4:], "a/"), _header_path(lines[i + 1][4:], "b/")
            if current is None or current.hunks:
                current = FilePatch(old, new)
                patches.append(current)
            current.old_path, current.new_path = old, new
            i += 1
        elif current is not None and line.startswith("@@"):
            hunk, i = _read_hunk(lines, i, current.path)
            current.hunks.append(hunk)
            continue
        elif current is not None:
            _read_extended_header(current, line)
        i += 1
    if not patches:
        raise PatchError("the diff contains no file changes")
    for patch in patches:
        if not patch.path:
            raise PatchError("a file in the diff has no path")
    return patches


def _read_extended_header(patch: FilePatch, line: str) -> None:
    if line.startswith(_MODE_LINES) and line.rsplit(maxsplit=1)[-1] in _NOT_FILES:
        raise PatchError(f"{patch.path}: symlinks and submodules are not supported in plans")
    if line.startswith(("new file mode ", "deleted file mode ")):
        if line.startswith("new"):
            patch.old_path, patch.new_mode = None, line.rsplit(maxsplit=1)[-1]
        else:
            patch.new_path = None
    elif line.startswith("new mode "):
        patch.new_mode = line.rsplit(maxsplit=1)[-1]
    elif line.startswith("rename from ") or line.startswith("copy from "):
        patch.old_path = _unquote(line.split(" from ", 1)[1])
    elif line.startswith("rename to ") or line.startswith("copy to "):
        patch.new_path = _unquote(line.split(" to ", 1)[1])
    elif line.startswith(("Binary files ", "GIT binary patch")):
        raise PatchError(f"{patch.path}: binary patches are not supported")


def _read_hunk(lines: list[str], i: int, path: str) -> tuple[Hunk, int]:
    match = _HUNK.match(lines[i])
    if match is None:
        raise PatchError(f"{path}: malformed hunk header {lines[i]!r}")
    old_start, old_count, _, new_count = (
        int(g) if g is not None else 1 for g in match.groups(default=None)
    )
    hunk = Hunk(old_start, old_count, new_count)
    old_left, new_left = old_count, new_count
    i += 1
    while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i] == _NO_NEWLINE):
        line = lines[i]
        if line == _NO_NEWLINE:
            if hunk.lines:
                last = hunk.lines[-1]
                hunk.lines[-1] = HunkLine(last.op, last.text, newline=False)
        else:
            op, body = (line[:1] or " "), line[1:]  # an empty line: context some tools trimmed
            if op not in " -+":
                raise PatchError(f"{path}: unexpected line in a hunk: {line!r}")
            hunk.lines.append(HunkLine(op, body))
            old_left -= op in " -"
            new_left -= op in " +"
        i += 1
    if old_left or new_left:
        raise PatchError(f"{path}: a hunk ends early (the diff is truncated)")
    return hunk, i


def apply_hunks(path: str, base: str, hunks: list[Hunk]) -> str:
    """``base`` patched by ``hunks``; ``PatchError`` naming the line that does not match.

    A hunk is tried where it says first, then at the nearest offset where its
    old lines match (as ``patch`` does); hunks must stay in order.
    """
    lines = _git_lines(base)
    out: list[str] = []
    cursor = 0
    for hunk in hunks:
        old = hunk.side(" -")
        at = _locate(lines, old, max(hunk.old_start - 1, 0) if hunk.old_count else hunk.old_start)
        if at is None or at < cursor:
            raise PatchError(f"{path}:{hunk.old_start}: the hunk does not match the file")
        out += lines[cursor:at] + hunk.side(" +")
        cursor = at + len(old)
    out += lines[cursor:]
    return "".join(out)


def _locate(lines: list[str], old: list[str], hint: int) -> int | None:
    size = len(lines)
    for delta in range(size + 1):
        for at in (hint - delta, hint + delta) if delta else (hint,):
            if 0 <= at <= size - len(old) and lines[at : at + len(old)] == old:
                return at
    return None


def render_diff(
    path: str,
    old: str | None,
    new: str | None,
    *,
    old_path: str | None = None,
    executable: bool = False,
) -> str:
    """The git-style unified diff of one file (``old``/``new`` None: absent)."""
    source = old_path or path
    mode = "100755" if executable else "100644"
    head = [f"diff --git a/{source} b/{path}"]
    if old is None:
        head.append(f"new file mode {mode}")
    elif new is None:
        head.append(f"deleted file mode {mode}")
    elif old_path is not None and old_path != path:
        head += [f"rename from {old_path}", f"rename to {path}"]
    body = difflib.unified_diff(
        _git_lines(old or ""),
        _git_lines(new or ""),
        fromfile=DEV_NULL if old is None else f"a/{source}",
        tofile=DEV_NULL if new is None else f"b/{path}",
    )
    text = "\n".join(head) + "\n"
    for line in body:
        text += line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}\n"
    return text


def _git_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
