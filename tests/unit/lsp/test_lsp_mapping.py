import json

import pytest
from lsprotocol.converters import get_converter
from lsprotocol.types import Diagnostic
from lsprotocol.types import DiagnosticSeverity as Sev
from lsprotocol.types import PositionEncodingKind as Enc

from acp_client.models import Finding, Location, RelatedLocation, ValidationMode
from lsp_server import mapping
from lsp_server.marks import (
    ConfigMark,
    Mark,
    config_mark,
    indexes,
    marks_for,
    placed,
    severity_for,
)
from tests.support.factories import finding, result

REQ, INFO = ValidationMode.REQUIRED, ValidationMode.INFORMATIONAL
CONVERTER = get_converter()


def text_of(
    mark: Mark, lines: list[str] | None, encoding: Enc, links: mapping.Links | None = None
) -> str:
    """The JSON of one mark's diagnostic."""
    (text,) = mapping.file_diagnostics(((mark.result, (mark.finding,)),), lines, encoding, links)
    return text


def to_diagnostic(
    mark: Mark, lines: list[str] | None, encoding: Enc, links: mapping.Links | None = None
) -> Diagnostic:
    """The diagnostic's JSON, read back as lsprotocol reads it: it must be
    valid LSP, and exactly what pygls itself would have sent for it."""
    text = text_of(mark, lines, encoding, links)
    (diagnostic,) = mapping.as_objects([text])
    assert CONVERTER.unstructure(diagnostic) == json.loads(text)
    return diagnostic


def config_diagnostic(mark: ConfigMark, lines: list[str] | None, encoding: Enc) -> Diagnostic:
    (diagnostic,) = mapping.as_objects([text := mapping.config_diagnostic(mark, lines, encoding)])
    assert CONVERTER.unstructure(diagnostic) == json.loads(text)
    return diagnostic


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


def test_the_indexes_held_per_file_are_compact() -> None:
    """Held as long as a result is shown: no int object per finding (~45
    bytes a finding at 100,000 of them). Adjacent ones are one int."""
    findings = [finding(f"m{n // 300}.py", n % 300) for n in range(600)]
    findings += [finding("x.py"), finding("y.py"), finding("x.py")]
    findings += [Finding(message="nowhere"), finding("acp.toml")]
    shown = placed(result(findings=findings))
    assert all(isinstance(shown[path], int) for path in ("m0.py", "m1.py", "y.py", "acp.toml"))
    assert indexes(shown["m0.py"]) == range(300) and indexes(shown["m1.py"]) == range(300, 600)
    assert list(shown["x.py"]) == [600, 602] and not isinstance(shown["x.py"], list)
    assert indexes(shown["x.py"]) is shown["x.py"]
    assert indexes(shown["y.py"]) == range(601, 602)
    assert indexes(shown["acp.toml"]) == range(603, 605)  # with the one without a file
    assert placed(result(mode=INFO, passed=True)) == {"acp.toml": [None]}


def test_a_file_met_in_several_runs_keeps_every_index_in_order() -> None:
    runs = [("a.py", 2), ("b.py", 1), ("a.py", 3), ("../out.py", 2), ("a.py", 1), ("b.py", 2)]
    findings = [finding(path, n) for path, count in runs for n in range(count)]
    shown = placed(result(findings=findings))
    assert list(indexes(shown["a.py"])) == [0, 1, 3, 4, 5, 8]
    assert list(indexes(shown["b.py"])) == [2, 9, 10]
    assert "../out.py" not in shown  # the path jail, once per path
    long_then_more = [finding("a.py")] * 70_000 + [finding("b.py"), finding("a.py")]
    again = placed(result(findings=long_then_more))
    assert list(indexes(again["a.py"])) == [*range(70_000), 70_001]


def test_one_run_a_file_is_placed_as_the_general_case_would() -> None:
    """The usual result (each file one run, as a tool's output over 10,000
    files is) takes a shortcut; an escape among its paths still goes."""
    findings = [finding(f"m{n}.py", n) for n in range(50)] + [Finding(message="nowhere")]
    shown = placed(result(findings=findings))
    assert {path: list(indexes(held)) for path, held in shown.items()} == {
        **{f"m{n}.py": [n] for n in range(50)},
        "acp.toml": [50],
    }
    assert all(isinstance(held, int) for held in shown.values())
    escaping = placed(result(findings=[finding("a.py"), finding("../out.py"), finding("b.py")]))
    assert {path: list(indexes(held)) for path, held in escaping.items()} == {
        "a.py": [0],
        "b.py": [2],
    }


def test_a_run_too_long_for_one_int_is_a_range() -> None:
    shown = placed(result(findings=[finding("a.py", n % 100) for n in range(70_000)]))
    assert shown["a.py"] == range(70_000) and indexes(shown["a.py"]) == range(70_000)


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


TRICKY = 'say "hi" \\ C:\\x\n\t\x00\x1f é 😀 \ud800 \u2028 </script>'


def test_the_text_is_what_json_dumps_writes_byte_for_byte() -> None:
    """Written by hand, yet exactly ``json.dumps`` of the same content:
    escapes, non-ASCII, a lone surrogate, ``null`` plan id, every field."""
    related = (
        RelatedLocation(location=Location(path="a.py", line=0, character=1), message=TRICKY),
    )
    found = Finding(
        location=Location(path="a.py", line=0, character=2),
        message=TRICKY,
        code=TRICKY,
        help_uri="https://example.org/R1",
        related=related,
    )
    for plan_id in (None, 'p"1'):
        r = result(TRICKY, findings=[found], plan_id=plan_id)
        mark = marks_for(r)["a.py"][0]
        links = mapping.Links(lambda path: (f"file:///{TRICKY}", ["é😀x"]), True)
        text = text_of(mark, ["é😀x"], Enc.Utf16, links)
        assert text == json.dumps(json.loads(text))
        assert json.loads(text)["data"] == {
            "result_id": r.id,
            "run_id": r.run_id,
            "plan_id": plan_id,
            "resource_id": "R",
            "validation": TRICKY,
            "finding": 0,
        }
        to_diagnostic(mark, ["é😀x"], Enc.Utf16, links)  # and valid LSP
    passed = result("notes", mode=INFO, passed=True, message=TRICKY)
    (own,) = marks_for(passed)["acp.toml"]
    assert json.loads(text := text_of(own, None, Enc.Utf16))["data"]["finding"] is None
    assert text == json.dumps(json.loads(text))
    error = config_mark(
        Finding(
            location=Location(path="acp.toml", line=0, character=0), message=TRICKY, code=TRICKY
        )
    )
    assert (text := mapping.config_diagnostic(error, None, Enc.Utf16)) == json.dumps(
        json.loads(text)
    )


def test_a_column_on_a_line_the_text_does_not_have_stays_in_code_points() -> None:
    mark = marks_for(result(findings=[finding("a.py", 5, 7)]))["a.py"][0]
    for lines in (None, ["😀😀😀😀😀😀😀😀"]):
        diagnostic = to_diagnostic(mark, lines, Enc.Utf16)
        assert (diagnostic.range.start.character, diagnostic.range.end.character) == (7, 8)


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


# Emoji (2 UTF-16 units, 4 UTF-8 bytes) and CJK (1 unit, 3 bytes) before "name".
OTHER = ["", "s = '😀中文'; name = 1"]
FILES = {"a.py": ("file:///editor/a.py", ["x"]), "b.py": ("file:///w/b.py", OTHER)}


def linked(**more: object) -> Mark:
    related = (
        RelatedLocation(
            location=Location(path="b.py", line=1, character=11, end_line=1, end_character=15),
            message="defined here",
        ),
        RelatedLocation(location=Location(path="gone.py", line=0, character=0)),
        RelatedLocation(location=Location(path="a.py", line=0, character=0)),
    )
    found = Finding(
        location=Location(path="a.py", line=0, character=0), message="m", related=related, **more
    )
    return marks_for(result(findings=[found]))["a.py"][0]


def places(path: str) -> tuple[str, list[str]] | None:
    return FILES.get(path)  # gone.py: not a file the editor can be pointed at


@pytest.mark.parametrize(
    ("encoding", "start", "end"), [(Enc.Utf16, 12, 16), (Enc.Utf8, 18, 22), (Enc.Utf32, 11, 15)]
)
def test_related_places_in_the_editors_uri_and_encoding(
    encoding: Enc, start: int, end: int
) -> None:
    diagnostic = to_diagnostic(linked(), ["x"], encoding, mapping.Links(places, False))
    assert diagnostic.related_information is not None
    first, second = diagnostic.related_information
    assert (first.location.uri, first.message) == ("file:///w/b.py", "defined here")
    assert (first.location.range.start.line, first.location.range.start.character) == (1, start)
    assert (first.location.range.end.line, first.location.range.end.character) == (1, end)
    assert (second.location.uri, second.message) == ("file:///editor/a.py", "")
    assert second.location.range.end.character == 1  # a point: one character wide


def test_no_related_information_unless_the_client_takes_it_or_a_place_is_left() -> None:
    assert to_diagnostic(linked(), ["x"], Enc.Utf16).related_information is None
    untaken = mapping.Links(None, True)
    assert to_diagnostic(linked(), ["x"], Enc.Utf16, untaken).related_information is None
    nowhere = mapping.Links(lambda path: None, False)
    text = text_of(linked(), ["x"], Enc.Utf16, nowhere)
    assert "relatedInformation" not in json.loads(text)


@pytest.mark.parametrize(
    ("link", "shown"),
    [
        ("https://docs.astral.sh/ruff/rules/unused-import", True),
        ("http://127.0.0.1:8080/rules/R1?x=1#y", True),
        ("javascript:alert(1)", False),
        ("docs/rules/R1.html", False),
        ("https://exa mple.org/", False),
        ("https://example.org/é", False),
        ("http://[::1/rule", False),
        ("https://", False),
    ],
)
def test_code_description_only_for_a_web_link_the_client_takes(link: str, shown: bool) -> None:
    mark = linked(help_uri=link)
    described = to_diagnostic(mark, ["x"], Enc.Utf16, mapping.Links(None, True))
    href = described.code_description.href if described.code_description else None
    assert href == (link if shown else None)
    assert (
        to_diagnostic(mark, ["x"], Enc.Utf16, mapping.Links(places, False)).code_description is None
    )
