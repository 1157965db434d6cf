"""Change sets -> LSP ``WorkspaceEdit``: pure, tested without a server.

Two inputs become edits: a finding's own fix (``TextEdit``\\ s in code
points, from the tool) and a plan's previewed change set (each file's edits
in code points, against a base whose sha256 the change names). Both are rendered
against the text the editor holds *now* (the open buffer, else the file on
disk), converted into the negotiated position encoding, and addressed with
the buffer's version, so an editor refuses an edit to a buffer that moved
since. Nothing here reads or writes files: the caller hands in each target.

A target whose text is not what the change was computed against is refused
with ``Stale`` before anything is sent: the edit would land in the wrong
place, or overwrite what the user typed.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lsprotocol import types

from acp_client.models import ChangeKind, FileChange, Location, TextEdit
from acp_client.text import Point, holds, span, split_lines
from lsp_server.capabilities import ClientSupport
from lsp_server.positions import column


class Stale(Exception):
    """A target's text is not the one the change was computed against."""

    def __init__(self, path: str, reason: str, *, unsaved: bool = False) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.unsaved = unsaved  # the buffer differs from the disk, which still fits


class EditorCannot(Exception):
    """The client cannot take this edit (it creates, deletes or renames a file)."""


@dataclass(frozen=True, slots=True)
class EditorFile:
    """A file as the editor sees it now: the open buffer (with its version),
    else the file on disk (``version`` None; its BOM dropped, as an editor
    would show it); ``text`` None: no such file."""

    uri: str
    version: int | None
    text: str | None
    dirty: bool = False  # open, and its buffer differs from the file on disk


@dataclass(frozen=True, slots=True)
class EditSupport:
    """What the client's ``workspace.workspaceEdit`` can take."""

    document_changes: bool = False
    create: bool = False
    delete: bool = False
    rename: bool = False
    annotations: bool = False

    @classmethod
    def of(cls, client: ClientSupport) -> EditSupport:
        # Resource operations exist only inside ``documentChanges``.
        operations = client.resource_operations if client.document_changes else frozenset()
        return cls(
            document_changes=client.document_changes,
            create=types.ResourceOperationKind.Create in operations,
            delete=types.ResourceOperationKind.Delete in operations,
            rename=types.ResourceOperationKind.Rename in operations,
            annotations=client.document_changes and client.change_annotations,
        )


@dataclass(frozen=True, slots=True)
class Annotation:
    """Shown by editors that can preview a refactoring before applying it."""

    id: str
    label: str
    description: str = ""


def fix_edit(
    edits: Sequence[TextEdit],
    targets: Mapping[str, EditorFile],
    encoding: types.PositionEncodingKind | str,
    support: EditSupport,
    expected: Mapping[str, str] | None = None,
) -> types.WorkspaceEdit:
    """A tool's fix (edits in code points, by resource path) as a WorkspaceEdit.

    ``expected``: sha256 of each file as the tool read it (the result's
    ``file_hashes``); a target whose text no longer hashes so is ``Stale``.
    Edits that overlap one another are refused too: the tool's fix would
    not mean what it says.
    """
    by_path: dict[str, list[types.TextEdit]] = {}
    for path in dict.fromkeys(edit.location.path for edit in edits):
        target = _target(targets, path)
        if target.text is None:
            raise Stale(path, "the file no longer exists")
        want = (expected or {}).get(path)
        if want is not None and not holds(target.text, want):
            raise Stale(path, "the file changed since the validation ran")
        by_path[path] = located_edits(path, edits, split_lines(target.text), encoding)
    return _assemble(
        [(_target(targets, path), edits_) for path, edits_ in by_path.items()], support, None
    )


def plan_edit(
    changes: Sequence[FileChange],
    targets: Mapping[str, EditorFile],
    encoding: types.PositionEncodingKind | str,
    support: EditSupport,
    annotation: Annotation | None = None,
) -> types.WorkspaceEdit:
    """A previewed plan as a WorkspaceEdit.

    Every target must still hold the change's base text (``base_sha256``;
    a created file, or a rename's new name, must not exist yet). The edits
    are the change's own (``plan.preview`` gives them, in code points, on
    the base). ``EditorCannot`` when the plan creates, deletes or renames a
    file and the client cannot, or a change comes without its edits.
    """
    annotation = annotation if support.annotations else None
    note = annotation.id if annotation is not None else None
    steps: list[Step] = []
    for change in changes:
        source = _target(targets, change.old_path or change.path)
        _check_base(change, source, targets)
        if change.kind is ChangeKind.DELETE:
            _require(support.delete, "delete", change.path)
            steps.append(types.DeleteFile(uri=source.uri, annotation_id=note))
            continue
        if change.kind is ChangeKind.CREATE:
            _require(support.create, "create", change.path)
            steps.append(types.CreateFile(uri=source.uri, annotation_id=note))
            source = EditorFile(source.uri, None, "")
        if not change.edits and change.new_text not in (None, source.text):
            raise EditorCannot(f"the change set carries no edits for {change.path}")
        lines = split_lines(source.text or "")
        edits = located_edits(change.old_path or change.path, change.edits, lines, encoding)
        if edits:
            steps.append((source, edits))
        if change.kind is ChangeKind.RENAME:
            _require(support.rename, "rename", change.path)
            new_uri = _target(targets, change.path).uri
            steps.append(types.RenameFile(old_uri=source.uri, new_uri=new_uri, annotation_id=note))
    return _assemble(steps, support, annotation)


def located_edits(
    path: str,
    edits: Sequence[TextEdit],
    lines: Sequence[str],
    encoding: types.PositionEncodingKind | str,
) -> list[types.TextEdit]:
    """Contract edits (code points) of one file, in document order, as LSP
    edits; overlapping ones are ``Stale`` (they would not mean what they say)."""
    spans = sorted(
        (_span(edit.location, lines), edit.new_text) for edit in edits if edit.location.path == path
    )
    for (first, _), (second, _) in itertools.pairwise(spans):
        if second[0] < first[1]:
            raise Stale(path, "the edits overlap")
    return [
        types.TextEdit(range=_range(lines, start, end, encoding), new_text=text)
        for (start, end), text in spans
    ]


def _require(supported: bool, operation: str, path: str) -> None:
    if not supported:
        raise EditorCannot(f"the editor cannot {operation} files ({path})")


def _check_base(change: FileChange, source: EditorFile, targets: Mapping[str, EditorFile]) -> None:
    if change.kind is ChangeKind.CREATE:
        if source.text is not None:
            raise Stale(change.path, "the file the plan creates exists already")
        return
    if source.text is None:
        raise Stale(change.old_path or change.path, "the file no longer exists")
    if change.base_sha256 is not None and not holds(source.text, change.base_sha256):
        path = change.old_path or change.path
        if source.dirty:
            raise Stale(path, "it has unsaved changes", unsaved=True)
        raise Stale(path, "it changed since the preview")
    if change.kind is ChangeKind.RENAME and _target(targets, change.path).text is not None:
        raise Stale(change.path, "the file the plan renames to exists already")


Step = (
    tuple[EditorFile, list[types.TextEdit]] | types.CreateFile | types.RenameFile | types.DeleteFile
)


def _assemble(
    steps: Sequence[Step],
    support: EditSupport,
    annotation: Annotation | None,
) -> types.WorkspaceEdit:
    if not support.document_changes:
        changes: dict[str, list[types.TextEdit]] = {}
        for step in steps:
            if isinstance(step, tuple):
                changes.setdefault(step[0].uri, []).extend(step[1])
        return types.WorkspaceEdit(changes=changes)
    document_changes: list[
        types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
    ] = []
    for step in steps:
        if not isinstance(step, tuple):
            document_changes.append(step)
            continue
        target, edits = step
        document_changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=target.uri, version=target.version
                ),
                edits=[_annotated(edit, annotation) for edit in edits],
            )
        )
    annotations = None
    if annotation is not None:
        annotations = {
            annotation.id: types.ChangeAnnotation(
                label=annotation.label,
                needs_confirmation=True,
                description=annotation.description or None,
            )
        }
    return types.WorkspaceEdit(document_changes=document_changes, change_annotations=annotations)


def _annotated(
    edit: types.TextEdit, annotation: Annotation | None
) -> types.TextEdit | types.AnnotatedTextEdit:
    if annotation is None:
        return edit
    return types.AnnotatedTextEdit(
        range=edit.range, new_text=edit.new_text, annotation_id=annotation.id
    )


def _target(targets: Mapping[str, EditorFile], path: str) -> EditorFile:
    target = targets.get(path)
    if target is None:
        raise Stale(path, "no such file in the resource")
    return target


def _span(location: Location, lines: Sequence[str]) -> tuple[Point, Point]:
    """A location's start and end (``acp_client.text.span``), clamped to the text."""
    start, end = span(location)
    return _clamp(lines, *start), _clamp(lines, *end)


def _clamp(lines: Sequence[str], line: int, character: int) -> Point:
    if line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    return line, min(character, len(lines[line]))


def _range(
    lines: Sequence[str], start: Point, end: Point, encoding: types.PositionEncodingKind | str
) -> types.Range:
    return types.Range(
        start=types.Position(start[0], _column(lines, start, encoding)),
        end=types.Position(end[0], _column(lines, end, encoding)),
    )


def _column(lines: Sequence[str], point: Point, encoding: types.PositionEncodingKind | str) -> int:
    line, character = point
    return column(lines[line], character, encoding) if line < len(lines) else character
