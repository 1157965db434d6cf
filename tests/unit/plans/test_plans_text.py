"""Edits in the contract's units: LSP lines, code points."""

from __future__ import annotations

import pytest

from acp_backend.plans.changes import PlannedFile, build_changes, sha256
from acp_backend.plans.text import EditError, apply_edits, compute_edits, lsp_lines
from acp_client.models import ChangeKind, Location, TextEdit
from acp_client.text import BOM, TakenEdits


def edit(line: int, char: int, end_line: int, end_char: int, text: str) -> TextEdit:
    location = Location(
        path="f", line=line, character=char, end_line=end_line, end_character=end_char
    )
    return TextEdit(location=location, new_text=text)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("a\nb", "a\nb\nc"),  # no newline at the end, on both sides
        ("a\r\nb\r\n", "a\r\nx\r\nb\r\n"),
        ("", "created\n"),
        ("gone\n", ""),
        ("héllo 🌍\nsecond\n", "héllo 🌍\n2nd\n"),
        ("one\rtwo\rthree", "one\rTWO\rthree"),  # a lone CR ends a line in LSP
    ],
)
def test_computed_edits_rebuild_the_new_text(old: str, new: str) -> None:
    edits, produced = compute_edits("f", old, new)
    assert apply_edits(old, edits) == new
    for lines in produced:
        assert 0 <= lines.start <= lines.end <= len(lsp_lines(new))


def test_edits_are_in_code_points() -> None:
    text = "🌍 x = 1\n"
    assert apply_edits(text, [edit(0, 2, 0, 3, "y")]) == "🌍 y = 1\n"


def test_positions_past_the_end_clamp() -> None:
    assert apply_edits("ab\ncd", [edit(0, 99, 5, 0, "!")]) == "ab!"


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(EditError):
        apply_edits("abcdef", [edit(0, 0, 0, 3, "x"), edit(0, 2, 0, 4, "y")])


def test_taken_edits_meet_a_later_edit_touching_included() -> None:
    taken = TakenEdits()
    taken.take([edit(0, 0, 0, 3, "x"), edit(2, 5, 2, 5, "insert")])
    assert taken.overlaps([edit(0, 3, 0, 3, "y")])  # at the very end of the first
    assert taken.overlaps([edit(2, 5, 2, 5, "z")])  # a second insertion at one point
    assert taken.overlaps([edit(1, 0, 3, 0, "spans the insertion")])
    assert not taken.overlaps([edit(1, 0, 1, 1, "y"), edit(2, 6, 2, 7, "after")])
    other_file = TextEdit(location=Location(path="g", line=0, character=0, end_line=0), new_text="")
    assert not taken.overlaps([other_file])


def test_taken_edits_that_meet_are_merged_and_still_answer_as_the_pairs_would() -> None:
    spans = [(0, 4, 0, 6), (0, 1, 0, 2), (0, 2, 0, 4), (1, 0, 1, 0), (0, 9, 1, 0), (3, 0, 3, 9)]
    taken = TakenEdits()
    for line, char, end_line, end_char in spans:
        taken.take([edit(line, char, end_line, end_char, "")])
    for line in range(5):
        for char in range(11):
            probe = edit(line, char, line, char, "")
            pairwise = any((sl, sc) <= (line, char) <= (el, ec) for sl, sc, el, ec in spans)
            assert taken.overlaps([probe]) is pairwise, (line, char)


def test_a_reversed_range_is_refused() -> None:
    with pytest.raises(EditError, match="ends before it starts"):
        apply_edits("abc\ndef\n", [edit(1, 2, 1, 1, "x")])
    reversed_lines = Location(path="f", line=1, character=0, end_line=0)
    with pytest.raises(EditError, match="ends before it starts"):
        apply_edits("abc\ndef\n", [TextEdit(location=reversed_lines, new_text="x")])


def test_an_end_line_without_an_end_character_runs_to_that_lines_end() -> None:
    # As acp_client.text.span reads it (and SARIF a region without endColumn):
    # the sandbox's apply and the editor's agree.
    to_end = Location(path="f", line=0, character=1, end_line=1)
    assert apply_edits("abc\ndef\nghi\n", [TextEdit(location=to_end, new_text="X")]) == (
        "aX\nghi\n"
    )
    whole_line = Location(path="f", line=1, character=0, end_line=1)
    assert apply_edits("abc\r\ndef\r\n", [TextEdit(location=whole_line, new_text="")]) == (
        "abc\r\n\r\n"
    )
    point = Location(path="f", line=0, character=1)  # no end line: an insertion
    assert apply_edits("abc\n", [TextEdit(location=point, new_text="X")]) == "aXbc\n"


def test_edits_of_a_file_with_a_bom_do_not_count_it() -> None:
    old, new = BOM + "import os\nx = 1\n", BOM + "import sys\nx = 1\n"
    edits, _ = compute_edits("f", old, new)
    assert [(e.location.line, e.location.character, e.new_text) for e in edits] == [
        (0, 0, "import sys\n")
    ]
    assert not any(BOM in e.new_text for e in edits)
    assert apply_edits(old, edits) == new  # the BOM stays in front
    # An editor's edit (its buffer has no BOM) lands where it says.
    assert apply_edits(old, [edit(0, 7, 0, 9, "re")]) == BOM + "import re\nx = 1\n"
    assert apply_edits(BOM, [edit(0, 0, 0, 0, "x")]) == BOM + "x"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (BOM + "a\nb\n", "a\nB\n"),  # the BOM goes
        ("a\nb\n", BOM + "a\nB\n"),  # the BOM comes
    ],
)
def test_a_bom_on_one_side_only_is_no_edit(old: str, new: str) -> None:
    edits, produced = compute_edits("f", old, new)
    assert [(e.location.line, e.new_text) for e in edits] == [(1, "B\n")]
    assert [(lines.start, lines.end) for lines in produced] == [(1, 2)]


def test_a_change_keeps_the_files_bom_in_its_content_and_hash() -> None:
    base, new = BOM + "import os\nx = 1\n", BOM + "x = 1\n"
    [change] = build_changes([PlannedFile(ChangeKind.MODIFY, "m.py", base, new)])
    assert change.new_text == new
    assert change.base_sha256 == sha256(base.encode("utf-8"))
    [removal] = change.edits
    location = removal.location
    assert (location.line, location.character, location.end_line, location.end_character) == (
        0,
        0,
        1,
        0,
    )
    assert removal.new_text == ""
