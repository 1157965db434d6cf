"""Change sets: from a diff or file edits to checked ``FileChange``s, and the guard hash.

A change set is built against the files as they are when the plan is made:
every hunk and edit must apply now, every path is jailed, and each change
records the sha256 of the content it expects (``base_sha256``). The plan
hash covers the change set and the *current* content of every target, so a
preview and an apply agree on it only if nothing moved in between.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from acp_backend.plans.diffs import PatchError, apply_hunks, parse_diff, render_diff
from acp_backend.plans.text import EditError, LineRange, apply_edits, compute_edits, lsp_lines
from acp_client.errors import InvalidParams, PlanError
from acp_client.jail import check_relative, jailed
from acp_client.models import ChangeKind, FileChange, FileEdit, Location, TextEdit
from acp_client.text import span


@dataclass(frozen=True)
class PlannedFile:
    """One file's change with both contents (``None``: the file is absent)."""

    kind: ChangeKind
    path: str
    base: str | None
    new: str | None
    executable: bool = False
    old_path: str | None = None

    @property
    def source(self) -> str:
        return self.old_path or self.path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(root: str, path: str) -> bytes | None:
    """The file's bytes; None when absent. PlanError when it is not a regular file."""
    target = jailed(root, path)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise PlanError(f"{path}: a directory on its way is a file") from None
    if not stat.S_ISREG(info.st_mode):
        raise PlanError(f"{path} is not a regular file")
    with open(target, "rb") as handle:
        return handle.read()


def read_text(root: str, path: str) -> str | None:
    data = read_bytes(root, path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(f"{path} is not UTF-8 text; plans change text files only") from None


def _existing(root: str, path: str) -> str:
    text = read_text(root, path)
    if text is None:
        raise PlanError(f"{path} does not exist", remedy="make the plan against the current files")
    return text


def _is_executable(root: str, path: str) -> bool:
    try:
        return bool(os.stat(jailed(root, path)).st_mode & stat.S_IXUSR)
    except FileNotFoundError:
        return False


def _absent(root: str, path: str) -> None:
    if read_bytes(root, path) is not None:
        raise PlanError(f"{path} already exists", remedy="make the plan against the current files")


def targets_from_diff(root: str, diff: str) -> list[PlannedFile]:
    try:
        patches = parse_diff(diff)
        targets = []
        for patch in patches:
            old, new = patch.old_path, patch.new_path
            for path in (old, new):
                if path is not None:
                    check_relative(path)
            if old is None:
                assert new is not None
                _absent(root, new)
                created = apply_hunks(new, "", patch.hunks)
                targets.append(
                    PlannedFile(ChangeKind.CREATE, new, None, created, patch.new_mode == "100755")
                )
                continue
            base = _existing(root, old)
            executable = (
                patch.new_mode == "100755"
                if patch.new_mode is not None
                else _is_executable(root, old)
            )
            if new is None:
                apply_hunks(old, base, patch.hunks)  # a stale deletion is refused too
                targets.append(PlannedFile(ChangeKind.DELETE, old, base, None, executable))
            elif new != old:
                _absent(root, new)
                content = apply_hunks(old, base, patch.hunks)
                targets.append(PlannedFile(ChangeKind.RENAME, new, base, content, executable, old))
            else:
                content = apply_hunks(old, base, patch.hunks)
                targets.append(PlannedFile(ChangeKind.MODIFY, old, base, content, executable))
    except PatchError as exc:
        raise PlanError(
            f"the diff does not apply: {exc}", remedy="diff against the current files"
        ) from None
    return targets


def targets_from_files(root: str, files: Sequence[FileEdit]) -> list[PlannedFile]:
    targets = []
    for item in files:
        check_relative(item.path)
        source = item.old_path if item.kind is ChangeKind.RENAME else item.path
        if source is None:
            raise InvalidParams(f"params.files: the rename of {item.path} has no old_path")
        check_relative(source)
        for edit in item.edits:
            if edit.location.path != source:
                raise InvalidParams(
                    f"params.files: an edit of {source} is located in {edit.location.path}"
                )
        if item.kind is ChangeKind.CREATE:
            _absent(root, item.path)
            targets.append(PlannedFile(ChangeKind.CREATE, item.path, None, item.new_text or ""))
            continue
        base = _existing(root, source)
        executable = _is_executable(root, source)
        if item.kind is ChangeKind.DELETE:
            targets.append(PlannedFile(ChangeKind.DELETE, item.path, base, None, executable))
            continue
        if item.kind is ChangeKind.RENAME:
            _absent(root, item.path)
        try:
            new = item.new_text if item.new_text is not None else apply_edits(base, item.edits)
        except EditError as exc:
            raise InvalidParams(f"params.files: {source}: {exc}") from None
        old_path = item.old_path if item.kind is ChangeKind.RENAME else None
        targets.append(PlannedFile(item.kind, item.path, base, new, executable, old_path))
    return targets


def build_changes(targets: Iterable[PlannedFile]) -> list[FileChange]:
    """The change set: one ``FileChange`` per target, each path at most once."""
    changes: list[FileChange] = []
    seen: set[str] = set()
    for target in targets:
        for path in {target.path, target.source}:
            if path in seen:
                raise PlanError(f"{path} is changed twice in one plan")
            seen.add(path)
        if target.kind is ChangeKind.MODIFY and target.new == target.base:
            continue
        changes.append(_file_change(target))
    if not changes:
        raise PlanError("the plan changes nothing")
    return changes


def _file_change(target: PlannedFile) -> FileChange:
    if target.base is None:
        text = target.new or ""
        insert = Location(path=target.path, line=0, character=0, end_line=0, end_character=0)
        edits: tuple[TextEdit, ...] = (TextEdit(location=insert, new_text=text),) if text else ()
    elif target.new is None:
        edits = ()
    else:
        edits, _ = compute_edits(target.source, target.base, target.new)
    return FileChange(
        path=target.path,
        kind=target.kind,
        old_path=target.old_path,
        base_sha256=None if target.base is None else sha256(target.base.encode("utf-8")),
        new_text=target.new,
        diff=render_diff(
            target.path,
            target.base,
            target.new,
            old_path=target.old_path,
            executable=target.executable,
        ),
        edits=edits,
        executable=target.executable,
    )


def produced_lines(change: FileChange, base: str | None) -> list[LineRange]:
    """The lines of the new content ``change`` produced (for provenance)."""
    if change.new_text is None:
        return []
    if base is None:
        return [LineRange(0, len(lsp_lines(change.new_text)))]
    return compute_edits(change.path, base, change.new_text)[1]


def produced_by_edits(change: FileChange) -> list[LineRange]:
    """The lines of the new content ``change``'s own edits produce (they are
    on the base, in order): for an apply the editor made, when the base may
    already be gone from the disk."""
    if change.new_text is None:
        return []
    produced: list[LineRange] = []
    shift = 0
    for edit in change.edits:
        at = edit.location
        _, (end_line, end_character) = span(at)
        replaced = end_line - at.line + (1 if end_character else 0)
        added = len(lsp_lines(edit.new_text))
        produced.append(LineRange(at.line + shift, at.line + shift + added))
        shift += added - replaced
    return produced


def same_change(changes: Sequence[FileChange]) -> frozenset[tuple[object, ...]]:
    """What makes two change sets the same change: each file's path, kind,
    source, expected base and result (diffs and edits follow from those)."""
    return frozenset(
        (c.path, c.kind, c.old_path, c.base_sha256, c.new_text, c.executable) for c in changes
    )


def written_paths(changes: Sequence[FileChange]) -> tuple[str, ...]:
    """Every path a change set writes, creates or removes, sorted."""
    return tuple(sorted({p for c in changes for p in target_paths(c)}))


def target_paths(change: FileChange) -> tuple[str, ...]:
    """Every path ``change`` reads or writes."""
    return (change.old_path, change.path) if change.old_path else (change.path,)


def current_contents(root: str, changes: Sequence[FileChange]) -> dict[str, bytes | None]:
    """Every target's current content (None: absent), each read once."""
    return {path: read_bytes(root, path) for c in changes for path in target_paths(c)}


def hashes_of(contents: Mapping[str, bytes | None]) -> dict[str, str | None]:
    return {path: None if data is None else sha256(data) for path, data in contents.items()}


def current_hashes(root: str, changes: Sequence[FileChange]) -> dict[str, str | None]:
    """sha256 of every target's current content (None: absent)."""
    return hashes_of(current_contents(root, changes))


def expected_hashes(changes: Sequence[FileChange]) -> dict[str, str | None]:
    """What ``current_hashes`` gives when nothing moved since the plan was made."""
    hashes: dict[str, str | None] = {}
    for change in changes:
        if change.old_path:
            hashes[change.old_path], hashes[change.path] = change.base_sha256, None
        else:
            hashes[change.path] = change.base_sha256
    return hashes


def applied_hashes(changes: Sequence[FileChange]) -> dict[str, str | None]:
    """What ``current_hashes`` gives once the change set is written."""
    hashes: dict[str, str | None] = {}
    for change in changes:
        if change.old_path:
            hashes[change.old_path] = None
        new = change.new_text
        hashes[change.path] = None if new is None else sha256(new.encode("utf-8"))
    return hashes


def moved_paths(changes: Sequence[FileChange], current: dict[str, str | None]) -> list[str]:
    expected = expected_hashes(changes)
    return sorted(path for path, sha in expected.items() if current.get(path) != sha)


def plan_hash(changes: Sequence[FileChange], current: dict[str, str | None]) -> str:
    payload = {
        "changes": [
            change.model_dump(mode="json", include={"path", "kind", "old_path", "new_text"})
            | {"executable": change.executable}
            for change in changes
        ],
        "current": current,
    }
    encoded = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return "sha256:" + sha256(encoded)
