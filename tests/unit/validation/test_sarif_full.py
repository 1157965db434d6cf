"""SARIF read in full: kinds and levels, regions of every form, related
places and code flows, fixes, rule help, placeholders, URIs, notifications."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_backend.validation.runner import Ending, ProcessOutcome
from acp_backend.validation.validator import Verdict, judge
from acp_client.models import Location, ResultOutcome, SeverityHint
from tests.unit.validation.validation_helpers import declared

LINES = ["x = '😀中文'\tvalue = 1", "second line", "third"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return tmp_path


def located(region: dict[str, Any], uri: str = "src/a.py", message: str = "") -> dict[str, Any]:
    return {
        "physicalLocation": {"artifactLocation": {"uri": uri}, "region": region},
        **({"message": {"text": message}} if message else {}),
    }


def log(*results: dict[str, Any], **run: Any) -> str:
    return json.dumps(
        {
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {"driver": {"name": "tool", "rules": run.pop("rules", [])}},
                    "results": list(results),
                    **run,
                }
            ],
        }
    )


def judged(root: Path, output: str, body: str = "", status: int = 1) -> Verdict:
    process = ProcessOutcome(Ending.EXITED, status=status, stdout=output)
    return judge(declared(f'format = "sarif"\n{body}'), process, root)


def result(region: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"message": {"text": "m"}, "locations": [located(region)], **extra}


def test_a_region_with_only_a_start_line_is_the_whole_line(root: Path) -> None:
    (finding,) = judged(root, log(result({"startLine": 1}))).findings
    assert finding.location == Location(
        path="src/a.py", line=0, character=0, end_line=0, end_character=len(LINES[0])
    )


def test_an_end_line_without_an_end_column_runs_to_that_lines_end(root: Path) -> None:
    region = {"startLine": 1, "startColumn": 3, "endLine": 2}
    (finding,) = judged(root, log(result(region))).findings
    assert finding.location == Location(
        path="src/a.py", line=0, character=2, end_line=1, end_character=len(LINES[1])
    )


def test_char_and_byte_offsets_resolve_against_the_file(root: Path) -> None:
    value = LINES[0].index("value")
    char_offset = len(LINES[0][:value].encode("utf-16-le")) // 2  # the spec's default unit
    byte_offset = len(LINES[0].encode("utf-8")) + 1 + len("second ")  # into line 2
    verdict = judged(
        root,
        log(
            result({"charOffset": char_offset, "charLength": 5}),
            result({"byteOffset": byte_offset, "byteLength": 4}),
        ),
    )
    by_chars, by_bytes = verdict.findings
    assert by_chars.location == Location(
        path="src/a.py", line=0, character=value, end_line=0, end_character=value + 5
    )
    assert by_bytes.location == Location(
        path="src/a.py", line=1, character=7, end_line=1, end_character=11
    )


def test_kinds_and_levels_follow_the_specification(root: Path) -> None:
    rules = [{"id": "R1", "defaultConfiguration": {"level": "error"}}]
    verdict = judged(
        root,
        log(
            result({"startLine": 1}, ruleId="R1"),  # kind fail: the rule's level
            result({"startLine": 1}),  # no rule: warning
            result({"startLine": 1}, kind="review"),  # not fail: level none
            result({"startLine": 1}, kind="pass"),
            result({"startLine": 1}, kind="notApplicable"),
            result({"startLine": 1}, kind="informational"),
            rules=rules,
        ),
    )
    assert [f.severity for f in verdict.findings] == [
        SeverityHint.ERROR,
        SeverityHint.WARNING,
        SeverityHint.HINT,
    ]


def test_passing_kinds_alone_pass_the_validation(root: Path) -> None:
    output = log(result({"startLine": 1}, kind="pass"), result({"startLine": 2}, kind="open"))
    verdict = judged(root, output, status=0)
    assert len(verdict.findings) == 1  # "open" still needs attention
    only_passes = judged(root, log(result({"startLine": 1}, kind="pass")), status=0)
    assert only_passes.passed


def test_related_places_extra_locations_and_code_flows(root: Path) -> None:
    flow = {
        "threadFlows": [
            {"locations": [{"location": located({"startLine": 3}, message="then [here](1)")}]}
        ]
    }
    entry = {
        "message": {"text": "see [the definition](1) and [\\[x\\]](2)"},
        "locations": [located({"startLine": 1, "startColumn": 1}), located({"startLine": 2})],
        "relatedLocations": [
            located({"startLine": 2, "startColumn": 8, "endColumn": 12}, message="definition"),
            located({"startLine": 1}, uri="/etc/hosts"),  # outside: left out
            located({"startLine": 1}, uri="src/missing.py"),  # no such file: left out
        ],
        "codeFlows": [flow],
    }
    (finding,) = judged(root, log(entry)).findings
    assert finding.message == "see the definition and [x]"
    assert [(r.location.line, r.location.character, r.message) for r in finding.related] == [
        (1, 0, ""),
        (1, 7, "definition"),
        (2, 0, "then here"),
    ]


def test_fixes_and_rule_help_are_kept(root: Path) -> None:
    value = LINES[0].index("value")
    rules = [
        {
            "id": "R1",
            "helpUri": "https://example.org/R1",
            "shortDescription": {"text": "no values"},
        }
    ]
    change = {
        "artifactLocation": {"uri": "src/a.py"},
        "replacements": [
            {
                "deletedRegion": {"startLine": 1, "startColumn": value + 2, "endColumn": value + 7},
                "insertedContent": {"text": "other"},
            }
        ],
    }
    entry = result(
        {"startLine": 1},
        ruleIndex=0,
        fixes=[{"description": {"text": "rename"}, "artifactChanges": [change]}],
    )
    (finding,) = judged(root, log(entry, rules=rules)).findings
    assert finding.help_uri == "https://example.org/R1"
    assert finding.rule_description == "no values"
    (fix,) = finding.fixes
    (edit,) = fix.edits
    # UTF-16 columns (no columnKind, unknown tool): the emoji counts 2.
    assert fix.description == "rename" and edit.new_text == "other"
    assert (edit.location.character, edit.location.end_character) == (value, value + 5)


def test_a_bom_and_percent_encoded_relative_uris(root: Path) -> None:
    (root / "src" / "with space.py").write_text("x\n")
    entry = {
        "message": {"text": "m"},
        "locations": [located({"startLine": 1}, uri="src/with%20space.py")],
    }
    (finding,) = judged(root, "\ufeff" + log(entry)).findings
    assert finding.location is not None and finding.location.path == "src/with space.py"


def test_a_pattern_path_is_not_percent_decoded(root: Path) -> None:
    (root / "a%20b.py").write_text("x\n")
    process = ProcessOutcome(Ending.EXITED, status=1, stdout="a%20b.py:1:1: error: e\n")
    (finding,) = judge(declared('format = "pattern"'), process, root).findings
    assert finding.location is not None and finding.location.path == "a%20b.py"


def test_a_container_base_uri_is_remapped_with_path_map(root: Path) -> None:
    entry = {
        "message": {"text": "m"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": "a.py", "uriBaseId": "SRC"},
                    "region": {"startLine": 2},
                }
            }
        ],
    }
    output = log(entry, originalUriBaseIds={"SRC": {"uri": "file:///src/"}})
    assert judged(root, output).findings == ()  # /src is not under the root: dropped
    (finding,) = judged(root, output, 'path_map = { "file:///src/" = "src" }').findings
    assert finding.location is not None and finding.location.path == "src/a.py"


def test_failed_execution_and_error_notifications_make_an_error(root: Path) -> None:
    invocation = {
        "executionSuccessful": False,
        "toolExecutionNotifications": [
            {"level": "error", "message": {"text": "could not parse"}, "locations": [
                located({"startLine": 2})
            ]},
            {"level": "warning", "message": {"text": "just a warning"}},
        ],
    }  # fmt: skip
    verdict = judged(root, log(result({"startLine": 1}), invocations=[invocation]), status=0)
    assert verdict.outcome is ResultOutcome.ERROR and not verdict.passed
    assert "src/a.py:2: could not parse" in verdict.message
    assert "just a warning" not in verdict.message
    assert len(verdict.findings) == 1
    bare = judged(root, log(invocations=[{"executionSuccessful": False}]), status=0)
    assert bare.outcome is ResultOutcome.ERROR and "executionSuccessful is false" in bare.message


def test_min_level_keeps_low_findings_from_failing(root: Path) -> None:
    output = log(result({"startLine": 1}, level="note"), result({"startLine": 2}, level="none"))
    verdict = judged(root, output, 'min_level = "warning"', status=0)
    assert verdict.passed and verdict.findings == ()
    assert verdict.message == "no findings; 2 below min_level ignored"
