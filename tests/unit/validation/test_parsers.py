"""Parsers on real tool output (ruff's SARIF, mypy's GNU lines) and on the
formats' edge cases; findings checked against the file's real text."""

from __future__ import annotations

import hashlib
import json
import re
import tracemalloc
from pathlib import Path

import pytest

from acp_backend.validation import locations
from acp_backend.validation.config import ColumnUnit
from acp_backend.validation.locations import FindingConverter, findings_of
from acp_backend.validation.parsers import parse_output
from acp_backend.validation.raw import (
    OutputError,
    RawEdit,
    RawFinding,
    RawFix,
    RawRegion,
    RawRelated,
)
from acp_backend.validation.runner import Ending, ProcessOutcome
from acp_backend.validation.validator import judge
from acp_client.models import Finding, SeverityHint
from acp_client.paths import path_to_uri
from tests.support.validation import FIXTURES
from tests.unit.validation.validation_helpers import SOURCES, declared

SAMPLE = (SOURCES / "unicode_sample.py").read_text(encoding="utf-8").splitlines()
SARIF = declared('format = "sarif"')


def parsed(config_body: str, stdout: str, root: Path = SOURCES) -> tuple[Finding, ...]:
    converter = FindingConverter(str(root))
    raws = parse_output(declared(config_body), stdout, "")
    return findings_of([converter.convert(raw) for raw in raws if converter.admits(raw)])


def covered(finding: Finding, lines: list[str]) -> str:
    """The text a single-line finding's range covers."""
    at = finding.location
    assert at is not None and at.end_line == at.line and at.end_character is not None
    return lines[at.line][at.character : at.end_character]


def relocated_ruff_sarif() -> str:
    """The captured SARIF, its absolute file: URIs moved to where the sources are now."""
    text = (FIXTURES / "ruff.sarif").read_text(encoding="utf-8")
    captured = re.search(r'"(file://[^"]*)/unicode_sample\.py"', text)
    assert captured is not None
    return text.replace(captured[1], path_to_uri(str(SOURCES)))


class TestRuffSarif:
    def test_findings_land_on_the_characters_ruff_means(self) -> None:
        findings = parsed('format = "sarif"', relocated_ruff_sarif())
        by_code = {(f.code, f.location.line if f.location else -1): f for f in findings}
        assert sorted(by_code) == [("E402", 2), ("E501", 0), ("E702", 2), ("E702", 3), ("F401", 2)]
        # Line 3 has an emoji and two CJK characters before these, line 4 an emoji and two CJK.
        assert covered(by_code["E702", 2], SAMPLE) == ";"
        assert covered(by_code["F401", 2], SAMPLE) == "os"
        assert covered(by_code["E402", 2], SAMPLE) == "import os"
        assert covered(by_code["E702", 3], SAMPLE) == ";"
        f401 = by_code["F401", 2]
        assert f401.location is not None and f401.location.path == "unicode_sample.py"
        assert f401.severity is SeverityHint.ERROR and f401.message == "`os` imported but unused"

    def test_findings_carry_the_rule_s_help_link_and_description(self) -> None:
        findings = parsed('format = "sarif"', relocated_ruff_sarif())
        by_code = {f.code: f for f in findings}
        semicolon, unused = by_code["E702"], by_code["F401"]
        assert semicolon.help_uri == (
            "https://docs.astral.sh/ruff/rules/multiple-statements-on-one-line-semicolon"
        )
        assert semicolon.rule_description == "Multiple statements on one line (semicolon)"
        # ruff's shortDescription for F401 is a message template: its name says more.
        assert unused.help_uri == "https://docs.astral.sh/ruff/rules/unused-import"
        assert unused.rule_description == "unused-import"

    def test_ruff_counts_code_points_so_utf16_would_be_wrong(self) -> None:
        # The known-tools table matters: read as the specification's default
        # (UTF-16), ruff's columns land one character early after an emoji.
        wrong = parsed('format = "sarif"\ncolumns = "utf-16"', relocated_ruff_sarif())
        f401 = next(f for f in wrong if f.code == "F401")
        assert covered(f401, SAMPLE) != "os"

    def test_findings_name_files_relative_to_the_root_and_hash_them(self) -> None:
        converter = FindingConverter(str(SOURCES))
        for raw in parse_output(SARIF, relocated_ruff_sarif(), ""):
            assert converter.admits(raw)
            converter.convert(raw)
        digest = hashlib.sha256((SOURCES / "unicode_sample.py").read_bytes()).hexdigest()
        assert converter.file_hashes == {"unicode_sample.py": digest}


class TestMypyPattern:
    def test_the_default_pattern_reads_mypy(self) -> None:
        output = (FIXTURES / "mypy.txt").read_text(encoding="utf-8")
        lines = (SOURCES / "mypy_sample.py").read_text(encoding="utf-8").splitlines()
        findings = parsed('format = "pattern"', output)
        assert [(f.code, f.severity) for f in findings] == [
            ("assignment", SeverityHint.ERROR),
            ("no-any-return", SeverityHint.ERROR),
            ("name-defined", SeverityHint.ERROR),
            (None, SeverityHint.INFO),
        ]
        assignment, _, undefined, note = findings
        # mypy's end column is the range's last character (inclusive).
        assert covered(assignment, lines) == '"three"'
        assert covered(undefined, lines) == "adjustment"
        assert covered(note, lines) == "count"
        assert undefined.message == 'Name "adjustment" is not defined'
        assert note.message == 'Revealed type is "int"'

    def test_gnu_lines_without_columns_or_with_zero_based_ones(self, tmp_path: Path) -> None:
        (tmp_path / "a.py").write_text("a\nb\nc\n")
        output = "a.py:3: error: no column\nnoise line\na.py:2:0: warning: zero-based\n"
        findings = parsed('format = "pattern"\none_based_columns = false', output, tmp_path)
        assert [(f.location.line, f.location.character) for f in findings if f.location] == [
            (2, 0),
            (1, 0),
        ]
        assert [f.severity for f in findings] == [SeverityHint.ERROR, SeverityHint.WARNING]

    def test_a_custom_pattern_and_byte_columns(self, tmp_path: Path) -> None:
        line = 'char *s = "é👋"; int x = y;'
        (tmp_path / "m.c").write_text(line + "\n", encoding="utf-8")
        byte = len(line[: line.index("y")].encode("utf-8")) + 1  # 1-based, as gcc counts
        pattern = r"^(?P<path>[^ ]+) line (?P<line>\d+) byte (?P<column>\d+) (?P<message>.*)$"
        body = f'format = "pattern"\npattern = \'{pattern}\'\ncolumns = "bytes"'
        (finding,) = parsed(body, f"m.c line 1 byte {byte} 'y' undeclared\n", tmp_path)
        assert finding.location is not None
        assert line[finding.location.character] == "y"
        assert finding.message == "'y' undeclared" and finding.code is None

    def test_a_pattern_reads_only_the_groups_it_has(self, tmp_path: Path) -> None:
        (tmp_path / "a.py").write_text("alpha = 1\nbeta = 2\n")
        # An end column without an end line ends on the start's line; an
        # end line without an end column is no end; a number of over 12
        # digits is no number; a pattern without ``message`` keeps the line.
        pattern = (
            r"^(?P<path>\S+) (?P<line>\d+)(?: to (?P<end_column>\d+))?"
            r"(?: until (?P<end_line>\d+))?(?: (?P<code>[A-Z]\d+))?"
        )
        output = "a.py 2 to 4 E1\na.py 1 until 2\na.py 1234567890123\n"
        found = list(
            parse_output(declared(f"format = \"pattern\"\npattern = '{pattern}'"), output, "")
        )
        assert [(f.line, f.column, f.end_line, f.end_column, f.code) for f in found] == [
            (1, 0, 1, 3, "E1"),
            (0, 0, None, None, None),
            (None, 0, None, None, None),
        ]
        assert [f.message for f in found] == output.splitlines()


class TestSarifFormat:
    def test_column_kind_unicode_code_points(self) -> None:
        text = (FIXTURES / "code_points.sarif").read_text(encoding="utf-8")
        findings = parsed('format = "sarif"', text)
        assert [f.code for f in findings] == ["HW001", "HW002", "HW005"]  # pass, suppressed: no
        assigned, imported, project = findings
        assert covered(assigned, SAMPLE) == "count"
        assert assigned.message == "'count' is assigned a str"  # from the rule's messageStrings
        assert assigned.severity is SeverityHint.WARNING  # the rule's default level
        assert covered(imported, SAMPLE) == "import"  # artifact given by index
        assert imported.severity is SeverityHint.INFO
        assert project.location is None and project.severity is SeverityHint.ERROR

    def test_a_run_without_column_kind_from_an_unknown_tool_counts_utf16(self) -> None:
        line = SAMPLE[3]
        start = line.index("count")
        utf16 = len(line[:start].encode("utf-16-le")) // 2
        assert utf16 != start
        log = sarif_log("unicode_sample.py", 4, utf16 + 1, utf16 + 6, tool="other-linter")
        (finding,) = parsed('format = "sarif"', log)
        assert covered(finding, SAMPLE) == "count"

    def test_uri_base_ids_resolve_against_their_base(self) -> None:
        log = json.loads(sarif_log("unicode_sample.py", 4, 22, 27, column_kind="unicodeCodePoints"))
        run = log["runs"][0]
        run["originalUriBaseIds"] = {"SRC": {"uri": path_to_uri(str(SOURCES)) + "/"}}
        location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        location["uriBaseId"] = "SRC"
        (finding,) = parsed('format = "sarif"', json.dumps(log))
        assert finding.location is not None and finding.location.path == "unicode_sample.py"
        assert covered(finding, SAMPLE) == "count"

    @pytest.mark.parametrize(
        ("stdout", "fragment"),
        [
            ("", "no SARIF output"),
            ("Error: ruff crashed", "not SARIF JSON"),
            ('{"version": "2.1.0"}', "no runs array"),
            ('{"version": "1.0.0", "runs": []}', "version 1.0.0"),
        ],
    )
    def test_output_that_is_not_sarif_is_an_error(self, stdout: str, fragment: str) -> None:
        with pytest.raises(OutputError, match=fragment):
            list(parse_output(SARIF, stdout, ""))


def sarif_log(
    uri: str,
    line: int,
    start: int,
    end: int,
    *,
    tool: str = "t",
    column_kind: str | None = None,
) -> str:
    run: dict[str, object] = {
        "tool": {"driver": {"name": tool}},
        "results": [
            {
                "ruleId": "R1",
                "message": {"text": "m"},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri},
                            "region": {"startLine": line, "startColumn": start, "endColumn": end},
                        }
                    }
                ],
            }
        ],
    }
    if column_kind:
        run["columnKind"] = column_kind
    return json.dumps({"version": "2.1.0", "runs": [run]})


class TestAcpJson:
    def test_findings_in_the_contracts_shape(self) -> None:
        line = SAMPLE[3]
        output = "\n".join(
            [
                json.dumps(
                    {
                        "location": {
                            "path": "unicode_sample.py",
                            "line": 3,
                            "character": line.index("count"),
                            "end_line": 3,
                            "end_character": line.index("count") + 5,
                        },
                        "message": "m",
                        "code": "C1",
                        "severity": "hint",
                    }
                ),
                "",
                json.dumps({"message": "no location"}),
            ]
        )
        located, bare = parsed('format = "acp-json"', output)
        assert covered(located, SAMPLE) == "count" and located.severity is SeverityHint.HINT
        assert bare.location is None and bare.message == "no location"

    def test_a_line_that_is_not_a_finding_is_an_error_naming_it(self) -> None:
        with pytest.raises(OutputError, match=r"output line 2 is not a finding: message"):
            list(parse_output(declared('format = "acp-json"'), '{"message": "ok"}\n{}\n', ""))


class TestPathJail:
    @pytest.fixture(autouse=True, params=["no-follow open", "lstat first"])
    def link_check(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        """Both ways of finding a link: opening without following one, and
        (where the system has no ``O_NOFOLLOW``) looking before opening."""
        if request.param == "lstat first":
            monkeypatch.setattr(locations, "_NO_FOLLOW", 0)

    def test_findings_outside_the_root_are_dropped(self, tmp_path: Path) -> None:
        root = tmp_path / "root"
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "ok.py").write_text("x = 1\n")
        (tmp_path / "secret.py").write_text("s = 1\n")
        (root / "escape.py").symlink_to(tmp_path / "secret.py")
        (root / "inside.py").symlink_to(root / "pkg" / "ok.py")
        output = "".join(
            f"{path}:1:1: error: e\n"
            for path in [
                "pkg/ok.py",
                "../secret.py",
                str(tmp_path / "secret.py"),
                "escape.py",
                "inside.py",
                str(root / "pkg" / "../pkg/ok.py"),
            ]
        )
        converter = FindingConverter(str(root))
        raws = list(parse_output(declared('format = "pattern"'), output, ""))
        kept = findings_of([converter.convert(raw) for raw in raws if converter.admits(raw)])
        assert [f.location.path for f in kept if f.location] == [
            "pkg/ok.py",
            "inside.py",
            "pkg/ok.py",
        ]
        assert converter.dropped == 3
        assert converter.missing == 0
        assert sorted(converter.file_hashes) == ["inside.py", "pkg/ok.py"]

    def test_a_related_place_or_a_fix_through_a_link_out_of_the_root_is_left_out(
        self, tmp_path: Path
    ) -> None:
        """The file opened without following a link (``O_NOFOLLOW``) is checked
        when it is one: secondary places meet that check too."""
        root = tmp_path / "root"
        root.mkdir()
        (root / "a.py").write_text("a = 1\n")
        (tmp_path / "secret.py").write_text("s = 1\n")
        (root / "escape.py").symlink_to(tmp_path / "secret.py")
        (root / "inside.py").symlink_to(root / "a.py")
        related = tuple(RawRelated(RawRegion(p), "see") for p in ("escape.py", "inside.py"))
        fixes = tuple(
            RawFix(f"fix {p}", (RawEdit(RawRegion(p), "x"),)) for p in ("escape.py", "inside.py")
        )
        raw = RawFinding("m", path="a.py", line=0, related=related, fixes=fixes)
        converter = FindingConverter(str(root))
        assert converter.admits(raw)
        (finding,) = findings_of([converter.convert(raw)])
        assert [r.location.path for r in finding.related] == ["inside.py"]
        assert [f.description for f in finding.fixes] == ["fix inside.py"]
        assert "escape.py" not in converter.file_hashes

    def test_paths_from_a_working_directory_and_odd_spellings(self, tmp_path: Path) -> None:
        root = tmp_path / "root"
        (root / "sub" / "pkg").mkdir(parents=True)
        (root / "sub" / "pkg" / "a.py").write_text("a = 1\n")
        (root / "top.py").write_text("t = 1\n")
        (tmp_path / "outside").mkdir()
        (tmp_path / "outside" / "b.py").write_text("b = 1\n")
        (root / "sub" / "linked").symlink_to(tmp_path / "outside")  # a directory escaping
        converter = FindingConverter(str(root), str(root / "sub"))
        reported = [
            "pkg/a.py",  # plain, under the working directory
            "./pkg/a.py",
            "pkg//a.py",
            "pkg/../../top.py",  # leaves the working directory, not the root
            "linked/b.py",  # plain, but through a link out of the root
            "../../outside/b.py",
        ]
        kept = [
            finding.location.path if finding.location else None
            for finding in findings_of(
                [
                    converter.convert(raw)
                    for raw in (RawFinding("m", path=path, line=0) for path in reported)
                    if converter.admits(raw)
                ]
            )
        ]
        assert kept == ["sub/pkg/a.py", "sub/pkg/a.py", "sub/pkg/a.py", "top.py"]
        assert converter.dropped == 2

    def test_a_root_seen_through_a_symlink_maps_back_to_the_root(self, tmp_path: Path) -> None:
        real = tmp_path / "real"
        real.mkdir()
        (real / "a.py").write_text("a = 1\n")
        (tmp_path / "link").symlink_to(real)
        converter = FindingConverter(str(tmp_path / "link"))
        raw = RawFinding("m", path=str(real / "a.py"), line=0)
        assert converter.admits(raw)
        (finding,) = findings_of([converter.convert(raw)])
        assert finding.location is not None and finding.location.path == "a.py"

    def test_other_uri_schemes_are_dropped(self) -> None:
        converter = FindingConverter(str(SOURCES))
        assert not converter.admits(RawFinding("m", path="untitled:Untitled-1", line=0))


def test_a_100000_finding_output_is_parsed_within_a_memory_bound(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text(
        "".join(f"value_{i} = 'é👋' + name_{i}\n" for i in range(1000)), encoding="utf-8"
    )
    output = "".join(
        f"big.py:{n % 1000 + 1}:{n % 20 + 1}: error: name 'name_{n}' is not defined  [x]\n"
        for n in range(100_000)
    )
    config = declared('format = "pattern"')
    tracemalloc.start()
    try:
        verdict = judge(config, ProcessOutcome(Ending.EXITED, status=1, stdout=output), tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert verdict.message.startswith("100000 findings; only the first 10000 are listed")
    assert len(verdict.findings) == 10_000
    # The output (6.5 MB) is streamed, never copied whole; only the listed findings stay.
    assert peak < 24 * 1024 * 1024, peak


def test_raw_findings_stream_without_holding_the_output_twice() -> None:
    output = "a.py:1:1: error: e\n" * 100_000
    tracemalloc.start()
    try:
        count = sum(1 for _ in parse_output(declared('format = "pattern"'), output, ""))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 100_000
    assert peak < 1024 * 1024, peak


def test_the_columns_setting_overrides_the_units_of_every_format() -> None:
    config = declared('format = "sarif"\ncolumns = "bytes"')
    log = sarif_log("a.py", 1, 1, 2, column_kind="utf16CodeUnits")
    (raw,) = parse_output(config, log, "")
    assert raw.unit is ColumnUnit.BYTES


@pytest.mark.parametrize(
    ("reported", "plain"),
    [
        ("pkg/a.py", True),
        (".hidden/a.py", True),
        ("a..b/..c/c..", True),
        ("a.py", True),
        ("", False),
        (".", False),
        ("..", False),
        ("./a.py", False),
        ("a/./b.py", False),
        ("a/../b.py", False),
        ("a/.", False),
        ("a/..", False),
        ("a//b.py", False),
        ("a/", False),
        ("/a.py", False),
        ("c:/a.py", False),
        ("a\\b.py", False),
    ],
)
def test_a_plain_path_is_one_normalising_would_leave_alone(reported: str, plain: bool) -> None:
    assert locations._plain(reported) is plain


def test_a_verdict_keys_its_file_hashes_by_its_findings_own_path_strings(tmp_path: Path) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("x = 1\n")
    output = "a.py:1:1: error: e\nb.py:1:1: error: f\n"
    verdict = judge(
        declared('format = "pattern"'), ProcessOutcome(Ending.EXITED, 1, output), tmp_path
    )
    paths = {id(f.location.path) for f in verdict.findings if f.location}
    assert {id(path) for path in verdict.file_hashes} == paths
