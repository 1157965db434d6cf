"""Positions in the contract are clamped into what LSP can carry (issue 8, item 8)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

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


def test_positions_read_from_json_are_clamped_too_and_non_numbers_refused() -> None:
    """A position in range is checked in pydantic's core alone; one out of
    range falls back to the clamp, from JSON as from Python."""
    findings = TypeAdapter(tuple[Finding, ...])
    text = (
        '[{"message": "x", "location": {"path": "a.py", "line": 99999999999, "character": -1}},'
        ' {"message": "y", "location": {"path": "a.py", "line": 3, "character": 4,'
        ' "end_line": 3, "end_character": 7}}]'
    )
    clamped, plain = findings.validate_json(text)
    assert clamped.location == Location(path="a.py", line=MAX_POSITION, character=0)
    assert plain.location == Location(path="a.py", line=3, character=4, end_line=3, end_character=7)
    with pytest.raises(ValidationError):
        findings.validate_json(
            '[{"message": "x", "location": {"path": "a.py", "line": "x", "character": 0}}]'
        )
