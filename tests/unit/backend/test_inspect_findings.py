"""Findings here: which findings cover a position, and what is said about each."""

from __future__ import annotations

from acp_backend.inspect.findings import findings_at
from acp_client.models import (
    Finding,
    FindingFix,
    Location,
    TextEdit,
    ValidationMode,
    ValidationSpec,
)
from tests.support.factories import finding, result

SPECS = {
    "lint": ValidationSpec(
        name="lint", mode=ValidationMode.REQUIRED, description="Lint it", has_fix=True
    ),
    "todos": ValidationSpec(name="todos", mode=ValidationMode.INFORMATIONAL),
}


def test_a_range_covers_its_characters_both_ends_included() -> None:
    word = Location(path="a.py", line=4, character=49, end_line=4, end_character=53)
    assert [c for c in range(47, 56) if word.covers(4, c)] == [49, 50, 51, 52, 53]
    assert not word.covers(3, 50) and not word.covers(5, 50)


def test_a_multi_line_range_covers_the_lines_between() -> None:
    span = Location(path="a.py", line=2, character=10, end_line=4, end_character=3)
    assert span.covers(3, 0) and span.covers(2, 10) and span.covers(4, 3)
    assert not span.covers(2, 9) and not span.covers(4, 4)


def test_no_character_means_the_whole_line() -> None:
    word = Location(path="a.py", line=4, character=49, end_line=5, end_character=2)
    assert word.covers(4) and word.covers(5) and not word.covers(3) and not word.covers(6)


def test_a_point_finding_covers_its_whole_line() -> None:
    point = Location(path="a.py", line=8, character=22)
    assert point.covers(8, 0) and point.covers(8, 500)
    assert not point.covers(7, 22)


def test_findings_at_a_position_with_their_validation_run_and_fix() -> None:
    fixable = Finding(
        location=Location(path="a.py", line=1, character=0, end_line=1, end_character=5),
        message="fixable",
        code="X1",
        help_uri="https://example.test/X1",
        fixes=(
            FindingFix(
                edits=(TextEdit(location=Location(path="a.py", line=1, character=0), new_text=""),)
            ),
        ),
    )
    todos = result("todos", ValidationMode.INFORMATIONAL, findings=[finding("a.py", 1, 3)], at=5)
    lint = result("lint", findings=[fixable, finding("a.py", 2), finding("b.py", 1)])
    found = findings_at([todos, lint], SPECS, "a.py", 1, 4, current_sha256=None)
    whole_line = findings_at([todos, lint], SPECS, "a.py", 1, None, current_sha256=None)
    assert whole_line == found
    assert findings_at([todos, lint], SPECS, "a.py", 1, 6, current_sha256=None)[0].validation == (
        "todos"
    )
    assert [(f.validation, f.finding.message) for f in found] == [
        ("lint", "fixable"),  # required first
        ("todos", "m"),
    ]
    first, second = found
    assert first.description == "Lint it" and first.mode is ValidationMode.REQUIRED
    assert first.result_id == lint.id and first.run_id == lint.run_id
    assert first.found_at == lint.finished_at
    assert first.finding.help_uri == "https://example.test/X1"
    assert second.description == ""


def test_an_undeclared_validation_still_shows_with_its_own_fix() -> None:
    own_fix = Finding(
        location=Location(path="a.py", line=0, character=0),
        message="m",
        fixes=(FindingFix(edits=()),),
    )
    (found,) = findings_at(
        [result("gone", findings=[own_fix])], SPECS, "a.py", 0, 0, current_sha256=None
    )
    assert found.description == "" and found.finding.fixes == own_fix.fixes


def test_a_finding_is_stale_when_the_text_looked_at_differs_from_what_was_linted() -> None:
    linted = result("lint", findings=[finding("a.py", 0)], file_hashes={"a.py": "h1"})
    (same,) = findings_at([linted], SPECS, "a.py", 0, 0, current_sha256="h1")
    (moved,) = findings_at([linted], SPECS, "a.py", 0, 0, current_sha256="h2")
    (unknown,) = findings_at([linted], SPECS, "a.py", 0, 0, current_sha256=None)
    assert (same.stale, moved.stale, unknown.stale) == (False, True, False)


def test_findings_without_a_place_show_on_their_declaration_line() -> None:
    declared = Location(path="acp.toml", line=3, character=0)
    whole = result("lint", findings=[Finding(message="project-wide")], declared_at=declared)
    passed = result("todos", ValidationMode.INFORMATIONAL, True, declared_at=declared)
    failed = result(
        "other", declared_at=Location(path="acp.toml", line=9, character=0), message="exit status 2"
    )
    results = [whole, passed, failed]
    assert [
        f.finding.message
        for f in findings_at(results, SPECS, "acp.toml", 3, 7, current_sha256=None)
    ] == ["project-wide"]
    assert [
        f.finding.message
        for f in findings_at(results, SPECS, "acp.toml", 9, 0, current_sha256=None)
    ] == ["exit status 2"]
    assert findings_at(results, SPECS, "acp.toml", 4, 0, current_sha256=None) == []
    assert findings_at(results, SPECS, "src/acp.toml", 3, 0, current_sha256=None) == []
