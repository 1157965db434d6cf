"""Judging a finished command: passed means exit status 0 and no findings."""

from __future__ import annotations

from pathlib import Path

from acp_backend.validation.runner import Ending, ProcessOutcome
from acp_backend.validation.validator import judge
from acp_client.models import ResultOutcome
from tests.unit.validation.validation_helpers import declared


def exited(status: int, stdout: str = "", stderr: str = "") -> ProcessOutcome:
    return ProcessOutcome(Ending.EXITED, status=status, stdout=stdout, stderr=stderr)


def test_exit_code_validations_pass_on_status_0_and_quote_the_last_lines(tmp_path: Path) -> None:
    config = declared("")
    output = "".join(f"line {n}\n" for n in range(30))
    failed = judge(config, exited(1, output, "boom\n"), tmp_path)
    assert not failed.passed and failed.outcome is ResultOutcome.COMPLETED
    expected_tail = [f"line {n}" for n in range(21, 30)] + ["boom"]
    assert failed.message.splitlines() == ["exit status 1", *expected_tail]
    assert judge(config, exited(0), tmp_path).passed


def test_a_tool_that_fails_without_findings_fails_and_says_how(tmp_path: Path) -> None:
    verdict = judge(
        declared('format = "pattern"'), exited(2, "", "mypy: error: no config\n"), tmp_path
    )
    assert not verdict.passed and verdict.findings == ()
    assert verdict.message == "exit status 2 without reporting findings\nmypy: error: no config"


def test_findings_fail_a_validation_even_with_exit_status_0(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    verdict = judge(declared('format = "pattern"'), exited(0, "a.py:1:1: error: e\n"), tmp_path)
    assert not verdict.passed and verdict.message == "1 finding"


def test_findings_outside_the_root_are_counted_in_the_message(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    output = "a.py:1:1: error: e\n/etc/hosts:1:1: error: outside\n"
    verdict = judge(declared('format = "pattern"'), exited(1, output), tmp_path)
    assert verdict.message == "1 finding; 1 outside the resource root ignored"


def test_findings_for_files_that_are_not_there_are_dropped_and_counted(tmp_path: Path) -> None:
    # The classic `cd sub && tool` mistake: paths relative to the wrong directory.
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.py").write_text("x\n")
    verdict = judge(declared('format = "pattern"'), exited(1, "a.py:1:1: error: e\n"), tmp_path)
    assert verdict.findings == ()
    assert verdict.message == "exit status 1; 1 finding for files not under the root dropped"
    relative_to_cwd = declared('format = "pattern"\ncwd = "sub"')
    verdict = judge(relative_to_cwd, exited(1, "a.py:1:1: error: e\n"), tmp_path)
    (finding,) = verdict.findings
    assert finding.location is not None and finding.location.path == "sub/a.py"


def test_a_killed_tool(tmp_path: Path) -> None:
    verdict = judge(declared('format = "pattern"'), exited(-9), tmp_path)
    assert verdict.message == "killed by signal 9 without reporting findings"
