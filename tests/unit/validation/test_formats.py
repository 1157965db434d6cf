"""The formats and options beyond SARIF and GNU lines: checkstyle XML, a JSON
mapping, the stream read, a report file, the environment, the working directory."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from acp_backend.validation.config import parse_config
from acp_backend.validation.runner import Ending, ProcessOutcome
from acp_backend.validation.validator import RunTarget, judge, run_validation
from acp_client.models import Location, ResultOutcome, SeverityHint, ValidationResult
from tests.unit.validation.validation_helpers import declared

LINE = "s = '😀中文'\tt = 1"
T = LINE.index("t")


def exited(stdout: str = "", stderr: str = "", status: int = 1) -> ProcessOutcome:
    return ProcessOutcome(Ending.EXITED, status=status, stdout=stdout, stderr=stderr)


def sample(root: Path) -> Path:
    (root / "a.py").write_text(LINE + "\n", encoding="utf-8")
    return root


def test_checkstyle_xml(tmp_path: Path) -> None:
    xml = (
        '<?xml version="1.0"?><checkstyle><file name="a.py">'
        f'<error line="1" column="{T + 2}" severity="warning" message="bad t" source="rule.x"/>'
        "</file></checkstyle>"
    )
    body = 'format = "checkstyle"\ncolumns = "utf-16"'
    (finding,) = judge(declared(body), exited(xml), sample(tmp_path)).findings
    assert finding.location == Location(path="a.py", line=0, character=T)
    assert (finding.code, finding.severity) == ("rule.x", SeverityHint.WARNING)


def test_checkstyle_with_entities_is_refused(tmp_path: Path) -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><checkstyle>&a;</checkstyle>'
    verdict = judge(declared('format = "checkstyle"'), exited(bomb), tmp_path)
    assert verdict.outcome is ResultOutcome.ERROR and "DTD" in verdict.message


MAPPING = """format = "json"
columns = "bytes"
[validations.mapping]
findings = "files[].problems[]"
path = "^name"
line = "where.row"
column = "where.col"
message = "text"
code = "id"
severity = "level"
severities = { "2" = "error" }
"""


def test_a_json_mapping_reads_nested_records_and_their_parents(tmp_path: Path) -> None:
    byte = len(LINE[:T].encode()) + 1
    output = (
        '{"files": [{"name": "a.py", "problems": ['
        f'{{"where": {{"row": 1, "col": {byte}}}, "text": "t!", "id": 7, "level": 2}}]}}]}}'
    )
    (finding,) = judge(declared(MAPPING), exited(output), sample(tmp_path)).findings
    assert finding.location == Location(path="a.py", line=0, character=T)
    assert (finding.message, finding.code, finding.severity) == ("t!", "7", SeverityHint.ERROR)


def test_a_json_mapping_reads_json_lines(tmp_path: Path) -> None:
    body = 'format = "json"\nmapping = { findings = "", path = "f", line = "l", message = "m" }'
    output = '{"f": "a.py", "l": 1, "m": "one"}\n{"f": "a.py", "l": 1, "m": "two"}\n'
    verdict = judge(declared(body), exited(output), sample(tmp_path))
    assert [f.message for f in verdict.findings] == ["one", "two"]


FAILING = """format = "json"
[validations.mapping]
findings = "results[]"
path = "file"
line = "lines[0]"
end_line = "lines[-1]"
column = "col"
end_column = "end"
message = "text"
rule_description = "about"
help_uri = "docs"
failures = "errors[]"
failure_path = "file"
"""


def test_a_json_mapping_reads_the_last_element_rules_and_the_files_the_tool_skipped(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\nz = 3\n", encoding="utf-8")
    record = (
        '{"file": "a.py", "lines": [1, 2, 3], "col": 1, "end": 2, "text": "t", '
        '"about": "what it checks", "docs": "https://x.test/r"}'
    )
    output = (
        f'{{"results": [{record}], "errors": [{{"file": "b.py", "reason": "cannot parse"}},'
        ' {"reason": "out of memory"}]}'
    )
    verdict = judge(declared(FAILING), exited(output, status=0), tmp_path)
    (finding,) = verdict.findings  # kept, though the result is an error
    assert finding.location == Location(
        path="a.py", line=0, character=0, end_line=2, end_character=1
    )
    assert (finding.rule_description, finding.help_uri) == ("what it checks", "https://x.test/r")
    assert verdict.outcome is ResultOutcome.ERROR and not verdict.passed
    assert verdict.message.startswith(
        "the tool could not check everything: b.py: cannot parse; out of memory"
    )
    clean = judge(declared(FAILING), exited('{"results": [], "errors": []}', status=0), tmp_path)
    assert clean.passed and clean.outcome is ResultOutcome.COMPLETED


def run(root: Path, body: str) -> ValidationResult:
    (config,) = parse_config(f'[[validations]]\nname = "v"\nmode = "required"\n{body}\n')
    return asyncio.run(run_validation(config, RunTarget("r", root, "run")))


def python(script: str) -> str:
    """A command running ``script`` with this interpreter (a TOML literal string)."""
    quotes = "'" * 3
    return f"command = ['{sys.executable}', '-c', {quotes}{script}{quotes}]"


def test_stream_env_cwd_and_output_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    sample(tmp_path / "sub")
    # Prints a finding on stderr and another, naming $WHERE, on stdout.
    script = (
        "import os, sys; print('a.py:1:1: error: on stderr', file=sys.stderr); "
        "print('a.py:1:1: error: ' + os.environ['WHERE'])"
    )
    common = f'format = "pattern"\ncwd = "sub"\nenv = {{ WHERE = "stdout" }}\n{python(script)}'
    both = run(tmp_path, common)
    assert sorted(f.message for f in both.findings) == ["on stderr", "stdout"]
    assert {f.location.path for f in both.findings if f.location} == {"sub/a.py"}
    only_err = run(tmp_path, common + '\nstream = "stderr"')
    assert [f.message for f in only_err.findings] == ["on stderr"]
    report = "open('out.txt', 'w').write('a.py:1:1: error: from the file')"
    from_file = run(tmp_path, f'format = "pattern"\ncwd = "sub"\noutput_file = "out.txt"\n'
                    f"{python(report)}")  # fmt: skip
    assert [f.message for f in from_file.findings] == ["from the file"]
    nothing = run(tmp_path, f'format = "pattern"\noutput_file = "none.txt"\n{python("pass")}')
    assert nothing.outcome is ResultOutcome.ERROR and "none.txt" in nothing.message


def test_continuation_lines_join_the_message(tmp_path: Path) -> None:
    output = "a.py:1:1: error: first\n  second\n    third\na.py:1:2: error: next\n"
    body = 'format = "pattern"\ncontinuation_lines = true'
    first, second = judge(declared(body), exited(output), sample(tmp_path)).findings
    assert first.message == "first\nsecond\nthird" and second.message == "next"
    plain = judge(declared('format = "pattern"'), exited(output), tmp_path).findings
    assert [f.message for f in plain] == ["first", "next"]


def test_ok_status_lets_a_tool_say_nothing_found_its_own_way(tmp_path: Path) -> None:
    verdict = judge(declared('format = "pattern"\nok_status = [0, 1]'), exited(""), tmp_path)
    assert verdict.passed
