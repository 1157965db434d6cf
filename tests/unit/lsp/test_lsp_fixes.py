"""The fixes feature against a fake editor: "Fix with *tool*" offered while
the document holds the text the tool read (a BOM or CRLF changes nothing),
resolved into the edit or run as a command, and "Fix all" by the one rule
``acp-lsp check --fix`` follows too."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import attrs
from lsprotocol import types

from acp_client.fixes import bulk_fix, fix_all
from acp_client.models import FindingFix, FixApplicability, Location, TextEdit, ValidationResult
from acp_client.text import BOM, digest
from lsp_server.code_actions import offered
from lsp_server.commands import APPLY_FIX, FIX_ALL, FIX_ALL_KIND, FixAllArgs, FixArgs
from lsp_server.features.fixes import Fixes, chosen
from lsp_server.settings import Settings
from lsp_server.snapshot import Snapshot
from tests.support.edit_text import apply_edits
from tests.support.factories import finding, result
from tests.unit.lsp.fakes import calls, snapshot, with_text

SOURCE = "import os\nx = 1\n"


def edit(line: int, character: int, end_line: int, end_character: int, text: str = "") -> TextEdit:
    location = Location(
        path="a.py",
        line=line,
        character=character,
        end_line=end_line,
        end_character=end_character,
    )
    return TextEdit(location=location, new_text=text)


def remove_import(description: str = "Remove unused import") -> FindingFix:
    return FindingFix(description=description, edits=(edit(0, 0, 1, 0),))


def unused_import(*fixes: FindingFix, read: str = SOURCE) -> ValidationResult:
    """ruff's finding on ``import os``, computed on ``read`` (the file's bytes)."""
    flagged = finding("a.py", 0, 7, "`os` imported but unused", end_line=0, end_character=9)
    other = finding("a.py", 1, 0, "undefined name", end_line=1, end_character=1)
    return result(
        "ruff",
        findings=[replace(flagged, fixes=fixes), other],
        file_hashes={"a.py": digest(read)},
    )


def at(line: int, character: int, only: list[str] | None = None) -> types.CodeActionParams:
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier("file:///r/a.py"),
        range=types.Range(types.Position(line, character), types.Position(line, character)),
        context=types.CodeActionContext(diagnostics=[], only=only),
    )


def fixes() -> Fixes:
    backend_calls, editor = calls()
    return Fixes(editor, backend_calls)


def actions(shot: Snapshot, line: int, character: int, only: list[str] | None = None) -> list:
    return offered(shot, at(line, character, only), [fixes()]) or []


def applied(shot: Snapshot, args: FixArgs | FixAllArgs) -> str:
    """The document's text after the fix's edit, as an editor applies it."""
    workspace_edit = fixes().edit(shot, args)
    assert workspace_edit is not None and shot.document is not None
    if workspace_edit.changes is not None:
        (edits,) = workspace_edit.changes.values()
    else:
        (change,) = workspace_edit.document_changes or ()
        assert isinstance(change, types.TextDocumentEdit)
        edits = change.edits
    return apply_edits(shot.document.text, edits, shot.encoding)


def fix_args(shot: Snapshot, r: ValidationResult) -> FixArgs:
    return FixArgs(
        uri=shot.uri or "", resource_id="R", validation="ruff", result_id=r.id, finding=0
    )


def test_the_findings_own_fix_is_offered_on_its_diagnostic_and_preferred() -> None:
    r = unused_import(remove_import())
    (quick,) = [a for a in actions(snapshot(results=[r]), 0, 8) if a.title.startswith("Fix with")]
    assert quick.title == "Fix with ruff: Remove unused import"
    assert quick.is_preferred is True and quick.kind == types.CodeActionKind.QuickFix
    assert quick.diagnostics is not None and quick.diagnostics[0].message.startswith("`os`")
    # Lazy: the edit comes from resolve; data leads back to the finding.
    assert quick.edit is None and quick.command is None
    assert quick.data["command"] == APPLY_FIX
    assert quick.data["arguments"]["result_id"] == r.id
    assert quick.data["arguments"]["finding"] == 0


def test_with_two_fixes_neither_is_preferred() -> None:
    r = unused_import(remove_import("a"), remove_import("b"))
    quick = [a for a in actions(snapshot(results=[r]), 0, 8) if a.title.startswith("Fix with")]
    assert [a.is_preferred for a in quick] == [False, False]


def test_without_resolve_support_the_fix_is_a_command() -> None:
    shot = snapshot(results=[unused_import(remove_import())], profile="emacs")
    (quick,) = [a for a in actions(shot, 0, 8) if a.title.startswith("Fix with")]
    assert quick.command is not None and quick.command.command == APPLY_FIX
    assert quick.data is None


def test_no_fix_elsewhere_nor_on_other_text_nor_for_a_result_no_longer_shown() -> None:
    r = unused_import(remove_import())
    assert not [a for a in actions(snapshot(results=[r]), 1, 0) if "Fix with" in a.title]
    typed = with_text(snapshot(results=[r]), "import sys, os\nx = 1\n")
    assert not [a for a in actions(typed, 0, 8) if "Fix with" in a.title]
    # A newer result of the validation replaced it: the editor's old diagnostic leads nowhere.
    old = actions(snapshot(results=[r]), 0, 8)[0].diagnostics
    newer = snapshot(results=[unused_import()])
    params = at(0, 8)
    params.context.diagnostics = old
    assert not [a for a in offered(newer, params, [fixes()]) or [] if "Fix with" in a.title]


def test_a_file_saved_with_a_bom_gets_its_fix_as_without_one() -> None:
    """Editors drop the BOM from the buffer; the tool read it with one."""
    r = unused_import(remove_import(), read=BOM + SOURCE)
    for shot in (snapshot(SOURCE, results=[r]), snapshot(BOM + SOURCE, results=[r])):
        titles = [a.title for a in actions(shot, 0, 8)]
        assert "Fix with ruff: Remove unused import" in titles
        assert "Fix all: 1 problem the tools can fix" in titles
        assert applied(shot, fix_args(shot, r)).removeprefix(BOM) == "x = 1\n"
        assert applied(shot, FixAllArgs(uri=shot.uri or "")).removeprefix(BOM) == "x = 1\n"


def test_a_crlf_file_is_fixed_as_read_and_an_lf_buffer_is_other_text() -> None:
    crlf = SOURCE.replace("\n", "\r\n")
    r = unused_import(remove_import(), read=crlf)
    shot = snapshot(crlf, results=[r])
    assert applied(shot, fix_args(shot, r)) == "x = 1\r\n"
    assert not [a for a in actions(with_text(shot, SOURCE), 0, 8) if "Fix" in a.title]


def test_resolve_gives_the_edit_or_the_command_that_says_it_no_longer_fits() -> None:
    r = unused_import(remove_import())
    shot = snapshot(results=[r])
    (quick,) = [a for a in actions(shot, 0, 8) if a.title.startswith("Fix with")]
    resolved = fixes().resolve(shot, attrs.evolve(quick))
    assert resolved.edit is not None and resolved.command is None
    stale = fixes().resolve(with_text(shot, "import sys, os\n"), attrs.evolve(quick))
    assert stale.edit is None and stale.command is not None
    assert stale.command.command == APPLY_FIX
    bad = types.CodeAction("x", data={"command": APPLY_FIX, "arguments": {"uri": 1}})
    assert fixes().resolve(shot, bad) is bad  # left as it came: nothing to resolve


async def test_the_command_sends_the_edit_or_says_why_not() -> None:
    r = unused_import(remove_import())
    backend_calls, editor = calls()
    feature = Fixes(editor, backend_calls)
    shot = snapshot(results=[r], profile="emacs")
    assert await feature.apply(shot, fix_args(shot, r)) == {"applied": True}
    ((sent, label),) = editor.edits
    assert (label == "Fix" and sent.changes) or sent.document_changes
    assert await feature.apply(with_text(shot, "typed\n"), fix_args(shot, r)) == {"applied": False}
    assert "no longer fits" in editor.messages()[-1]
    editor.applies = False
    assert await feature.apply(shot, fix_args(shot, r)) == {"applied": False}


def test_fix_all_takes_one_fix_a_finding_and_skips_what_meets_one_taken() -> None:
    """Touching edits meet (insertions at one point); edits in other files do not."""
    insert_a = FindingFix(edits=(edit(1, 0, 1, 0, "a"),))
    insert_b = FindingFix(edits=(edit(1, 0, 1, 0, "b"),))
    after = FindingFix(edits=(edit(0, 9, 1, 0, "\n"),))  # ends where insert_a starts
    elsewhere = FindingFix(
        edits=(
            TextEdit(
                location=Location(path="b.py", line=1, character=0, end_line=1, end_character=0),
                new_text="c",
            ),
        )
    )
    findings = [
        replace(finding("a.py", 1, 0), fixes=(insert_a,)),
        replace(finding("a.py", 1, 0), fixes=(insert_b,)),
        replace(finding("a.py", 0, 9), fixes=(after,)),
        replace(finding("a.py", 1, 0), fixes=(elsewhere,)),
        finding("a.py", 1, 0),  # no fix: not a candidate
    ]
    r = result("ruff", findings=findings, file_hashes={"a.py": digest(SOURCE)})
    taken, skipped = fix_all([(r, n) for n in range(len(findings))])
    assert [n for _, n in taken] == [0, 3]
    assert [n for _, n in skipped] == [1, 2]
    shot = snapshot(results=[r])
    assert [n for _, n in chosen(shot)[0]] == [0, 3]  # the document's findings, by the rule
    (fix_all_action,) = actions(shot, 5, 0, [FIX_ALL_KIND])
    assert fix_all_action.title == "Fix all: 2 problems the tools can fix"
    assert fix_all_action.data["command"] == FIX_ALL


def test_fix_all_is_in_a_fixed_order_whatever_order_the_results_come_in() -> None:
    first = result("a-lint", findings=[replace(finding("a.py", 1, 0), fixes=(remove_import(),))])
    second = result("b-lint", findings=[replace(finding("a.py", 1, 0), fixes=(remove_import(),))])
    for order in ([first, second], [second, first]):
        taken, skipped = fix_all([(r, 0) for r in order])
        assert [r.validation for r, _ in taken] == ["a-lint"]
        assert [r.validation for r, _ in skipped] == ["b-lint"]


def test_only_filters_by_kind_and_its_parents() -> None:
    shot = snapshot(results=[unused_import(remove_import())])
    only_fix_all = actions(shot, 5, 0, [FIX_ALL_KIND])
    assert [(a.kind, a.title) for a in only_fix_all] == [
        (FIX_ALL_KIND, "Fix all: 1 problem the tools can fix")
    ]
    assert [a.title for a in actions(shot, 5, 0, ["source.fixAll"])] == [
        a.title for a in only_fix_all
    ]
    assert not actions(shot, 0, 8, ["refactor"])
    assert not actions(snapshot(results=[unused_import()]), 0, 0, [FIX_ALL_KIND])


def unsafe(fix: FindingFix) -> FindingFix:
    return replace(fix, applicability=FixApplicability.UNSAFE)


def test_an_unsafe_fix_says_so_and_fix_all_leaves_it_unless_asked() -> None:
    """As ruff: its own --fix takes safe fixes; --unsafe-fixes the others too."""
    r = unused_import(unsafe(remove_import()))
    shot = snapshot(results=[r])
    (quick,) = [a for a in actions(shot, 0, 8) if a.title.startswith("Fix with")]
    assert quick.title == "Fix with ruff (unsafe): Remove unused import"
    assert quick.is_preferred is False  # never picked by an editor's "apply preferred"
    assert applied(shot, fix_args(shot, r)) == "x = 1\n"  # chosen on its own: applied
    assert chosen(shot) == ([], []) and actions(shot, 5, 0, [FIX_ALL_KIND]) == []
    opted_in = dataclasses.replace(shot, settings=Settings(unsafe_fixes=True))
    assert [n for _, n in chosen(opted_in)[0]] == [0]
    assert applied(opted_in, FixAllArgs(uri=shot.uri or "")) == "x = 1\n"


def test_fix_all_takes_a_findings_first_safe_fix_and_never_a_display_only_one() -> None:
    shown_only = replace(remove_import("show"), applicability=FixApplicability.DISPLAY_ONLY)
    first_unsafe = unsafe(remove_import("risky"))
    safe_second = FindingFix(description="safe", edits=(edit(0, 7, 0, 9, "sys"),))
    r = unused_import(shown_only, first_unsafe, safe_second)
    shot = snapshot(results=[r])
    titles = [a.title for a in actions(shot, 0, 8) if a.title.startswith("Fix with")]
    assert titles == ["Fix with ruff (unsafe): risky", "Fix with ruff: safe"]
    assert bulk_fix(r.findings[0]) == safe_second
    assert bulk_fix(r.findings[0], unsafe=True) == first_unsafe
    assert applied(shot, FixAllArgs(uri=shot.uri or "")) == "import sys\nx = 1\n"
    only_shown = unused_import(shown_only)
    assert bulk_fix(only_shown.findings[0], unsafe=True) is None
    assert fix_all([(only_shown, 0)], unsafe=True) == ([], [])
