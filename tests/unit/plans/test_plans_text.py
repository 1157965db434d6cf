"""Edits in the contract's units: LSP lines, code points."""

from __future__ import annotations

import pytest

from acp_backend.plans.text import EditError, apply_edits, compute_edits, lsp_lines, overlaps
from acp_client.models import Location, TextEdit


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
    assert overlaps([edit(0, 0, 0, 3, "x")], [edit(0, 3, 0, 3, "y")])
    assert not overlaps([edit(0, 0, 0, 3, "x")], [edit(1, 0, 1, 1, "y")])
