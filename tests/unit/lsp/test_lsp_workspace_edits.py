"""The change-set renderer: fixes and plans -> WorkspaceEdit, in every encoding.

The edits are checked by applying them the way an editor does (positions
in the negotiated unit) and comparing the text, not by their shape alone.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from lsprotocol import types

from acp_backend.plans.changes import build_changes, targets_from_files
from acp_client.models import ChangeKind, FileChange, FileEdit, Location, TextEdit
from acp_client.text import digest
from lsp_server.capabilities import ClientSupport
from lsp_server.workspace_edits import (
    Annotation,
    EditorCannot,
    EditorFile,
    EditSupport,
    Stale,
    fix_edit,
    plan_edit,
)
from tests.support.edit_text import apply_edits

ENCODINGS = ["utf-8", "utf-16", "utf-32"]
FULL = EditSupport(document_changes=True, create=True, delete=True, annotations=True)


def edits_of(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.changes is not None:
        return list(edit.changes[uri])
    found: list[types.TextEdit] = []
    for change in edit.document_changes or ():
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
            found.extend(
                types.TextEdit(range=e.range, new_text=e.new_text)
                for e in change.edits
                if not isinstance(e, types.SnippetTextEdit)
            )
    return found


CASES = [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("import os\nx = 1\n", "x = 1\n"),
    ("no newline", "no newline at all"),
    ("one\ntwo", "one\ntwo\nthree"),
    ("é🙂 = 1\r\nb = 2\r\n", "é🙂 = 2\r\nb = 2\r\n"),
    ("", "new\n"),
    ("gone\n", ""),
]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(("old", "new"), CASES)
def test_a_previewed_change_turns_the_buffer_into_its_new_text(
    tmp_path: Path, old: str, new: str, encoding: str
) -> None:
    """The backend's own change set (its edits, on the base, in code points)
    rendered for the editor and applied as the editor does."""
    built = change("a.py", old, new, root=tmp_path)
    edit = plan_edit([built], {"a.py": EditorFile("file:///a.py", 1, old)}, encoding, FULL)
    assert apply_edits(old, edits_of(edit, "file:///a.py"), encoding) == new


def test_a_change_without_its_edits_goes_to_the_backend() -> None:
    bare = FileChange(path="a.py", base_sha256=digest("a\n"), new_text="b\n")
    with pytest.raises(EditorCannot, match="no edits"):
        plan_edit([bare], {"a.py": EditorFile("file:///a.py", 1, "a\n")}, "utf-16", FULL)


def fix(path: str, line: int, char: int, end_line: int, end_char: int, *, text: str) -> TextEdit:
    location = Location(
        path=path, line=line, character=char, end_line=end_line, end_character=end_char
    )
    return TextEdit(location=location, new_text=text)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_fix_lands_where_the_tool_meant_in_every_encoding(encoding: str) -> None:
    text = "s = 'é🙂'; import os\nprint(s)\n"
    target = {"a.py": EditorFile("file:///r/a.py", 7, text)}
    # Delete "; import os" (code points 8..19 on line 0).
    edit = fix_edit(
        [fix("a.py", 0, 8, 0, 19, text="")], target, encoding, FULL, {"a.py": digest(text)}
    )
    (document,) = edit.document_changes or ()
    assert isinstance(document, types.TextDocumentEdit)
    assert document.text_document.version == 7  # the editor refuses it if the buffer moved
    assert apply_edits(text, edits_of(edit, "file:///r/a.py"), encoding) == "s = 'é🙂'\nprint(s)\n"


def test_ruffs_unused_import_fix_deletes_the_whole_line() -> None:
    text = "import os\nimport sys\n"
    edit = fix_edit(
        [fix("a.py", 0, 0, 1, 0, text="")],
        {"a.py": EditorFile("file:///a.py", 1, text)},
        "utf-16",
        FULL,
    )
    assert apply_edits(text, edits_of(edit, "file:///a.py"), "utf-16") == "import sys\n"


def test_a_fix_for_a_file_that_changed_since_the_run_is_stale() -> None:
    target = {"a.py": EditorFile("file:///a.py", 2, "import os\nx = 1\n")}
    with pytest.raises(Stale, match="changed since the validation ran"):
        fix_edit(
            [fix("a.py", 0, 0, 1, 0, text="")],
            target,
            "utf-16",
            FULL,
            {"a.py": digest("import os\n")},
        )


def test_overlapping_fix_edits_are_refused() -> None:
    target = {"a.py": EditorFile("file:///a.py", 1, "abcdef\n")}
    with pytest.raises(Stale, match="overlap"):
        fix_edit(
            [fix("a.py", 0, 0, 0, 3, text="x"), fix("a.py", 0, 2, 0, 4, text="y")],
            target,
            "utf-16",
            FULL,
        )


def test_without_document_changes_the_edit_is_a_changes_map() -> None:
    text = "a\n"
    edit = fix_edit(
        [fix("a.py", 0, 0, 0, 1, text="b")],
        {"a.py": EditorFile("file:///a.py", 1, text)},
        "utf-16",
        EditSupport(),
    )
    assert edit.document_changes is None
    assert apply_edits(text, edits_of(edit, "file:///a.py"), "utf-16") == "b\n"


def change(
    path: str, base: str | None, new: str | None, kind: str = "modify", *, root: Path | None = None
) -> FileChange:
    """A change as the backend builds it (``plan.create`` with file edits)."""
    folder = Path(tempfile.mkdtemp()) if root is None else root
    if base is not None:
        (folder / path).write_bytes(base.encode())
    edit = FileEdit(path=path, kind=ChangeKind(kind), new_text=new)
    (built,) = build_changes(targets_from_files(str(folder), [edit]))
    return built


def test_a_plan_becomes_versioned_annotated_edits() -> None:
    old, new = "x = 1\ny = 2\n", "x = 1\ny = 3\n"
    targets = {"a.py": EditorFile("file:///r/a.py", 4, old)}
    annotation = Annotation("plan-P", "Fix lint", "from ruff")
    edit = plan_edit([change("a.py", old, new)], targets, "utf-16", FULL, annotation)
    (document,) = edit.document_changes or ()
    assert isinstance(document, types.TextDocumentEdit)
    assert document.text_document.version == 4
    assert all(
        isinstance(e, types.AnnotatedTextEdit) and e.annotation_id == "plan-P"
        for e in document.edits
    )
    assert edit.change_annotations == {
        "plan-P": types.ChangeAnnotation(
            label="Fix lint", needs_confirmation=True, description="from ruff"
        )
    }
    assert apply_edits(old, edits_of(edit, "file:///r/a.py"), "utf-16") == new


def test_annotations_only_when_the_client_supports_them() -> None:
    old = "a\n"
    support = EditSupport(document_changes=True)
    edit = plan_edit(
        [change("a.py", old, "b\n")],
        {"a.py": EditorFile("file:///a.py", 1, old)},
        "utf-16",
        support,
        Annotation("i", "l"),
    )
    assert edit.change_annotations is None
    (document,) = edit.document_changes or ()
    assert isinstance(document, types.TextDocumentEdit)
    assert not any(isinstance(e, types.AnnotatedTextEdit) for e in document.edits)


def test_a_dirty_buffer_is_never_edited_over() -> None:
    targets = {"a.py": EditorFile("file:///a.py", 9, "x = 1  # typed, unsaved\n", dirty=True)}
    with pytest.raises(Stale, match="unsaved changes"):
        plan_edit([change("a.py", "x = 1\n", "x = 2\n")], targets, "utf-16", FULL)


def test_a_file_that_moved_since_the_preview_is_stale() -> None:
    targets = {"a.py": EditorFile("file:///a.py", None, "x = 5\n")}
    with pytest.raises(Stale, match="changed since the preview"):
        plan_edit([change("a.py", "x = 1\n", "x = 2\n")], targets, "utf-16", FULL)


def test_created_and_deleted_files() -> None:
    targets = {
        "new.py": EditorFile("file:///new.py", None, None),
        "old.py": EditorFile("file:///old.py", None, "bye\n"),
    }
    changes = [
        change("new.py", None, "hello\n", "create"),
        change("old.py", "bye\n", None, "delete"),
    ]
    edit = plan_edit(changes, targets, "utf-16", FULL)
    kinds = [type(c).__name__ for c in edit.document_changes or ()]
    assert kinds == ["CreateFile", "TextDocumentEdit", "DeleteFile"]
    assert apply_edits("", edits_of(edit, "file:///new.py"), "utf-16") == "hello\n"
    with pytest.raises(EditorCannot):
        plan_edit(changes, targets, "utf-16", EditSupport(document_changes=True))


def test_creating_a_file_that_exists_is_stale() -> None:
    targets = {"new.py": EditorFile("file:///new.py", None, "already\n")}
    with pytest.raises(Stale, match="exists already"):
        plan_edit([change("new.py", None, "x\n", "create")], targets, "utf-16", FULL)


def test_support_is_read_from_the_client_capabilities() -> None:
    from pytest_lsp import client_capabilities

    def of(capabilities: types.ClientCapabilities) -> EditSupport:
        return EditSupport.of(ClientSupport.of(types.InitializeParams(capabilities=capabilities)))

    vscode = of(client_capabilities("visual-studio-code"))
    assert vscode == EditSupport(
        document_changes=True, create=True, delete=True, rename=True, annotations=True
    )
    assert of(types.ClientCapabilities()) == EditSupport()
    # Neovim does not announce documentChanges: it gets a changes map.
    assert of(client_capabilities("neovim@v0.11")) == EditSupport()
    assert of(client_capabilities("emacs")) == EditSupport(document_changes=True)


def test_the_changes_own_edits_are_used_when_it_has_them() -> None:
    old = "import os\nimport sys\n"
    location = Location(path="a.py", line=0, character=0, end_line=1, end_character=0)
    own = FileChange(
        path="a.py",
        base_sha256=digest(old),
        new_text="import sys\n",
        edits=(TextEdit(location=location, new_text=""),),
    )
    edit = plan_edit([own], {"a.py": EditorFile("file:///a.py", 3, old)}, "utf-16", FULL)
    (document,) = edit.document_changes or ()
    assert isinstance(document, types.TextDocumentEdit)
    assert [(e.range.start.line, e.range.end.line, e.new_text) for e in document.edits] == [
        (0, 1, "")
    ]


def test_a_rename_edits_the_old_file_then_moves_it() -> None:
    old = "x = 1\n"
    location = Location(path="old.py", line=0, character=4, end_line=0, end_character=5)
    move = FileChange(
        path="new.py",
        kind="rename",
        old_path="old.py",
        base_sha256=digest(old),
        new_text="x = 2\n",
        edits=(TextEdit(location=location, new_text="2"),),
    )
    targets = {
        "old.py": EditorFile("file:///old.py", 2, old),
        "new.py": EditorFile("file:///new.py", None, None),
    }
    support = EditSupport(document_changes=True, rename=True)
    edit = plan_edit([move], targets, "utf-16", support)
    steps = list(edit.document_changes or ())
    assert [type(s).__name__ for s in steps] == ["TextDocumentEdit", "RenameFile"]
    assert apply_edits(old, edits_of(edit, "file:///old.py"), "utf-16") == "x = 2\n"
    with pytest.raises(EditorCannot):
        plan_edit([move], targets, "utf-16", EditSupport(document_changes=True))
    taken = {**targets, "new.py": EditorFile("file:///new.py", None, "other\n")}
    with pytest.raises(Stale, match="renames to exists"):
        plan_edit([move], taken, "utf-16", support)
