"""Positions in the contract are clamped into what LSP can carry (issue 8, item 8)."""

from __future__ import annotations

from pydantic import TypeAdapter

from acp_client.models import MAX_POSITION, Finding, Location


def test_a_huge_line_or_column_is_clamped_not_refused() -> None:
    location = Location(path="a.py", line=2**40, character=10**5000, end_character=-3)
    assert (location.line, location.character, location.end_character) == (
        MAX_POSITION,
        MAX_POSITION,
        0,
    )


def test_one_absurd_finding_does_not_make_the_others_unreadable() -> None:
    raw = {"message": "x", "location": {"path": "a.py", "line": 2**31, "character": 0}}
    assert TypeAdapter(Finding).validate_python(raw).location == Location(
        path="a.py", line=MAX_POSITION, character=0
    )
