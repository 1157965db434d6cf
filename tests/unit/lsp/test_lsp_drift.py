"""Fixes and findings through unsaved edits: a fix whose lines the user did
not touch is offered where its lines went; one whose line changed is
withheld (shown disabled, with why, to a client that shows such actions);
the diagnostics move the same way."""

from __future__ import annotations

import json
from dataclasses import replace

from lsprotocol import types

from acp_client.models import FindingFix, Location, TextEdit
from acp_client.text import digest
from lsp_server.code_actions import offered
from lsp_server.commands import FixAllArgs, FixArgs
from lsp_server.documents import Document
from lsp_server.drift import LineMap
from lsp_server.features.diagnostics.presenter import Presenter
from lsp_server.features.fixes import Fixes
from lsp_server.snapshot import Snapshot
from tests.support.edit_text import apply_edits
from tests.support.factories import finding, result
from tests.unit.lsp.fakes import RESOURCE, FakeSource, calls, edited, snapshot

SAVED = "import os\nx = 1\n"
ABOVE = "# a comment typed above, not saved\nimport os\nx = 1\n"
ON_ITS_LINE = "import os, sys\nx = 1\n"


def unused_import() -> object:
    whole_line = Location(path="a.py", line=0, character=0, end_line=1, end_character=0)
    fix = FindingFix(
        description="Remove unused import", edits=(TextEdit(location=whole_line, new_text=""),)
    )
    flagged = finding("a.py", 0, 7, "`os` imported but unused", end_line=0, end_character=9)
    return result(
        "ruff", findings=[replace(flagged, fixes=(fix,))], file_hashes={"a.py": digest(SAVED)}
    )


def params(shot: Snapshot, line: int, shown: list[types.Diagnostic]) -> types.CodeActionParams:
    """The request an editor sends, naming the diagnostics it still shows there."""
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(shot.uri or ""),
        range=types.Range(types.Position(line, 8), types.Position(line, 8)),
        context=types.CodeActionContext(diagnostics=shown),
    )


def at(shot: Snapshot, line: int, shown: list[types.Diagnostic] | None = None) -> list:
    backend_calls, editor = calls()
    return offered(shot, params(shot, line, shown or []), [Fixes(editor, backend_calls)]) or []


def test_the_lines_a_tool_read_are_followed_where_they_went() -> None:
    moved = LineMap(SAVED.split("\n"), ABOVE.split("\n"))
    assert moved.offset(0, 1) == 1
    changed = LineMap(SAVED.split("\n"), ON_ITS_LINE.split("\n"))
    assert changed.offset(0, 0) is None and changed.offset(1, 1) == 0
    assert changed.offset(0, 1) is None  # a span across a changed line


def test_a_fix_survives_an_unrelated_edit_and_lands_where_its_line_went() -> None:
    r = unused_import()
    shot = edited(snapshot(SAVED, results=[r]), ABOVE)
    (fix,) = [a for a in at(shot, 1) if a.title.startswith("Fix with")]
    assert fix.disabled is None
    args = FixArgs(
        uri=shot.uri or "", resource_id="R", validation="ruff", result_id=r.id, finding=0
    )
    workspace_edit = Fixes(*reversed(calls())).edit(shot, args)  # type: ignore[arg-type]
    assert workspace_edit is not None
    (change,) = workspace_edit.document_changes or ()
    assert isinstance(change, types.TextDocumentEdit)
    assert (
        apply_edits(ABOVE, list(change.edits), "utf-16")
        == "# a comment typed above, not saved\nx = 1\n"
    )
    fix_all = Fixes(*reversed(calls())).edit(shot, FixAllArgs(uri=shot.uri or ""))  # type: ignore[arg-type]
    assert fix_all is not None


def test_a_fix_whose_line_changed_is_withheld_and_says_why_where_it_can() -> None:
    r = unused_import()
    before = snapshot(SAVED, results=[r])
    still_shown = list(before.diagnostics)  # the editor keeps what it was sent
    shot = edited(before, ON_ITS_LINE)
    (withheld,) = [a for a in at(shot, 0, still_shown) if a.title.startswith("Fix with")]
    assert withheld.disabled is not None
    assert withheld.disabled.reason == "the line changed since ruff read it: save to run it again"
    assert withheld.edit is None and withheld.data is None
    plain = replace(shot, support=replace(shot.support, code_action_disabled=False))
    backend_calls, editor = calls()
    feature = Fixes(editor, backend_calls)
    asked = params(shot, 0, still_shown)
    for _ in range(3):
        assert not [a for a in offered(plain, asked, [feature]) or () if "Fix with" in a.title]
    assert editor.logged == [
        "“Fix with ruff: Remove unused import” not offered: the line changed since ruff "
        "read it: save to run it again."
    ]  # once, however often asked


def test_diagnostics_move_with_the_lines_and_leave_changed_ones() -> None:
    source = FakeSource()
    source.roots.remember(RESOURCE)
    r = unused_import()
    other = result(
        "todo",
        findings=[finding("a.py", 1, 0, "on x")],
        file_hashes={"a.py": digest(SAVED)},
    )
    key = ("R", "a.py")
    source.results.apply(r)
    source.results.apply(other)
    view = Presenter(source, "utf-16")
    source.documents[key] = Document("file:///r/a.py", 2, ABOVE, saved=SAVED)
    shown = [json.loads(text) for text in view.diagnostics(key)]
    assert [(d["message"], d["range"]["start"]["line"]) for d in shown] == [
        ("`os` imported but unused", 1),
        ("on x", 2),
    ]
    source.documents[key] = Document("file:///r/a.py", 3, ON_ITS_LINE, saved=SAVED)
    shown = [json.loads(text) for text in view.diagnostics(key)]
    assert [(d["message"], d["range"]["start"]["line"]) for d in shown] == [("on x", 1)]
    source.documents[key] = Document("file:///r/a.py", 4, ABOVE, saved="something else\n")
    assert view.diagnostics(key) == []  # computed on text neither saved nor in the buffer


def test_lines_are_matched_around_edits_in_a_long_file_of_repeated_lines() -> None:
    """10,000 lines that repeat one function's body (the case that made
    difflib take a second): every unchanged line is placed, exactly."""
    body = ["def f():", "    s = 1", "    return s", ""]
    read = [line.replace("f()", f"f{n}()") if n % 7 else line for n in range(2500) for line in body]
    one_insert = [*read[:5000], "x = 1", *read[5000:]]
    moved = LineMap(read, one_insert)
    assert [moved.offset(n, n) for n in (0, 4999, 5000, len(read) - 1)] == [0, 0, 1, 1]
    scattered = list(read)
    for n in range(3, len(read), 400):
        scattered[n] = f"changed {n}"
    placed = LineMap(read, scattered)
    for n in range(len(read)):
        expected = None if n in range(3, len(read), 400) else 0
        assert placed.offset(n, n) == expected, n
    removed = [*read[:10], *read[12:]]
    assert LineMap(read, removed).offset(20, 30) == -2
    assert LineMap(read, removed).offset(10, 11) is None
