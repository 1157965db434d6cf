import pytest
from lsprotocol.types import DiagnosticSeverity as Sev
from lsprotocol.types import PositionEncodingKind as Enc

from acp_client.models import Finding, Location, ValidationMode
from lsp_server.features.diagnostics.mapping import (
    config_diagnostic,
    config_mark,
    marks_for,
    severity_for,
    to_diagnostic,
)
from tests.unit.lsp.lsp_factories import finding, result

REQ, INFO = ValidationMode.REQUIRED, ValidationMode.INFORMATIONAL


@pytest.mark.parametrize(
    ("mode", "passed", "severity"),
    [
        (REQ, False, Sev.Error),
        (REQ, True, None),
        (INFO, False, Sev.Warning),
        (INFO, True, Sev.Hint),
    ],
)
def test_severity_table(mode: ValidationMode, passed: bool, severity: Sev | None) -> None:
    assert severity_for(mode, passed) == severity


def test_tool_severity_hint_does_not_decide() -> None:
    hinted = Finding(
        location=Location(path="a.py", line=0, character=0), message="m", severity="hint"
    )
    marks = marks_for(result(mode=REQ, findings=[hinted]))
    assert marks["a.py"][0].severity == Sev.Error


def test_required_pass_shows_nothing_even_with_findings() -> None:
    assert marks_for(result(mode=REQ, passed=True, findings=[finding("a.py")])) == {}


def test_findings_grouped_by_file() -> None:
    marks = marks_for(result(findings=[finding("a.py", 1), finding("b.py"), finding("a.py", 3)]))
    assert {path: len(m) for path, m in marks.items()} == {"a.py": 2, "b.py": 1}


def test_result_without_findings_anchors_on_declaration() -> None:
    declared = Location(path="acp.toml", line=4, character=0)
    failed = result(mode=INFO, passed=False, message="exit status 3", declared_at=declared)
    (mark,) = marks_for(failed)["acp.toml"]
    assert mark.anchored and mark.location.line == 4
    assert mark.message == "exit status 3" and mark.severity == Sev.Warning
    diagnostic = to_diagnostic(mark, ["", "", "", "", "[[validations]]  # ✓"], Enc.Utf16)
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (4, 0)
    assert diagnostic.range.end.character == len("[[validations]]  # ✓")


def test_locationless_finding_and_missing_declaration_use_acp_toml_top() -> None:
    passed = result(mode=INFO, passed=True, findings=[Finding(message="note")])
    (mark,) = marks_for(passed)["acp.toml"]
    assert mark.severity == Sev.Hint and mark.location.line == 0 and mark.message == "note"


def test_diagnostic_fields_and_utf16_range() -> None:
    f = finding("a.py", 0, 10, "unused", code="F401", end_line=0, end_character=11)
    r = result("ruff", findings=[f], plan_id=None)
    diagnostic = to_diagnostic(marks_for(r)["a.py"][0], ["s = '😀' + x"], Enc.Utf16)
    assert diagnostic.source == "ruff" and diagnostic.code == "F401"
    assert diagnostic.data["result_id"] == r.id and diagnostic.data["run_id"] == r.run_id
    assert (diagnostic.range.start.character, diagnostic.range.end.character) == (11, 12)


def test_point_finding_is_one_character_wide() -> None:
    diagnostic = to_diagnostic(
        marks_for(result(findings=[finding("a.py", 0, 2)]))["a.py"][0], ["ab中d"], Enc.Utf8
    )
    assert (diagnostic.range.start.character, diagnostic.range.end.character) == (2, 5)


def test_findings_escaping_the_resource_are_dropped() -> None:
    escaping = [finding("../other/x.py"), finding("/etc/passwd"), finding("ok/../../x.py")]
    marks = marks_for(result(findings=[*escaping, finding("src/fine.py")]))
    assert list(marks) == ["src/fine.py"]


def test_a_broken_acp_toml_is_an_error_where_the_backend_locates_it() -> None:
    error = finding("acp.toml", 2, 0, "acp.toml:3: validations[1].mode: bad")
    diagnostic = config_diagnostic(config_mark(error), ["", "", "mode = 3"], Enc.Utf16)
    assert (diagnostic.severity, diagnostic.source) == (Sev.Error, "acp.toml")
    assert diagnostic.message == "acp.toml:3: validations[1].mode: bad"
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (2, 0)
    assert diagnostic.range.end.character == 1  # a point, like any finding


@pytest.mark.parametrize("error", [Finding(message="unreadable"), finding("../acp.toml")])
def test_an_acp_toml_error_without_a_place_inside_shows_on_its_first_line(error: Finding) -> None:
    mark = config_mark(error)
    assert mark.anchored and (mark.location.path, mark.location.line) == ("acp.toml", 0)
    diagnostic = config_diagnostic(mark, ["[[validations]]"], Enc.Utf16)
    assert diagnostic.range.end.character == len("[[validations]]")
