"""A file with a UTF-8 BOM, through the real tools: positions never count it.

Measured on line 1 of a BOM file against the same file without the BOM:
ruff (SARIF, code points: F401 at 8..10, its fix at 1..22), bandit (JSON,
bytes: B602 at 41, its preset leaves the end out), flake8, mypy
--no-native-parser, ripgrep, eslint, tsc, yamllint, markdownlint and gcc
(display cells) report the same columns for both; semgrep (bytes: 44 for
41) and clang (bytes: 35 for 32) count the BOM's 3 bytes, pyright (0-based
UTF-16: 10 for 9) and shellcheck (code points: 11 for 10) count it as one
character; their presets say so
(``columns_count_bom``). The contract's line 0 starts after the BOM, as an
editor shows the text, so a finding and a tool's fix land on the same
characters in both files, and the fix applied in the backend's sandbox
keeps the BOM.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from acp_backend.plans.text import apply_edits
from acp_backend.validation.config import parse_config
from acp_backend.validation.runner import validator_environment
from acp_backend.validation.validator import RunTarget, run_validation
from acp_client.models import Finding, ValidationResult
from acp_client.text import BOM

PY = 'import os, subprocess; label: int = "été"; subprocess.call(label, shell=True)'
C = 'int main(void) {\treturn "été" + x; }'
SH = 'echo "été" $1'
SOURCES = {"py": PY, "c": C, "sh": SH}
SEMGREP_RULES = """\
rules:
  - id: shell-call
    pattern: subprocess.call(...)
    message: a shell call
    languages: [python]
    severity: WARNING
"""


def run(root: Path, preset: str, extra: str = "") -> ValidationResult:
    if shutil.which(preset, path=validator_environment().get("PATH")) is None:
        pytest.skip(f"{preset} is not installed")
    declared = f'[[validations]]\npreset = "{preset}"\nmode = "required"\n{extra}'
    (config,) = parse_config(declared)
    return asyncio.run(run_validation(config, RunTarget("r", root, "run")))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bom")
    for suffix, line in SOURCES.items():
        text = line + "\nprint(label)\n" if suffix == "py" else line + "\n"
        (root / f"bom.{suffix}").write_bytes((BOM + text).encode("utf-8"))
        (root / f"plain.{suffix}").write_bytes(text.encode("utf-8"))
    (root / ".semgrep.yml").write_text(SEMGREP_RULES)
    return root


def on_line_0(
    result: ValidationResult, suffix: str, wanted: Callable[[Finding], bool]
) -> dict[str, Finding]:
    """The one wanted finding on line 0 of each of the two files, by file."""
    by_path: dict[str, Finding] = {}
    for finding in result.findings:
        at = finding.location
        if at is not None and at.line == 0 and at.path.endswith(suffix) and wanted(finding):
            assert at.path not in by_path, result.findings
            by_path[at.path] = finding
    assert set(by_path) == {f"bom.{suffix}", f"plain.{suffix}"}, (result.message, result.findings)
    return by_path


def code(name: str) -> Callable[[Finding], bool]:
    return lambda finding: finding.code == name


def span(finding: Finding) -> tuple[int, int | None]:
    at = finding.location
    assert at is not None
    return at.character, at.end_character


def test_ruff_code_points_and_its_fix_do_not_count_the_bom(root: Path) -> None:
    unused = on_line_0(run(root, "ruff"), "py", code("F401"))
    start = PY.index("os")
    assert {span(finding) for finding in unused.values()} == {(start, start + 2)}
    fixes = {path: finding.fixes[0].edits for path, finding in unused.items()}
    edit_spans = {
        (edit.location.line, edit.location.character, edit.location.end_character, edit.new_text)
        for edits in fixes.values()
        for edit in edits
    }
    assert edit_spans == {(0, 0, PY.index(";"), "import subprocess")}
    fixed = PY.replace("os, ", "") + "\nprint(label)\n"
    bom_text = (root / "bom.py").read_bytes().decode("utf-8")
    assert apply_edits(bom_text, fixes["bom.py"]) == BOM + fixed
    assert apply_edits(bom_text.removeprefix(BOM), fixes["plain.py"]) == fixed


def test_bandit_byte_columns_do_not_count_the_bom(root: Path) -> None:
    shell = on_line_0(run(root, "bandit"), "py", code("B602"))
    # The preset maps bandit's start only (its end can be another node's).
    assert {span(finding) for finding in shell.values()} == {(PY.index("subprocess.call"), None)}


def test_semgrep_counts_the_bom_s_bytes_and_its_preset_says_so(root: Path) -> None:
    shell = on_line_0(run(root, "semgrep"), "py", code("shell-call"))
    assert {span(finding) for finding in shell.values()} == {(PY.index("subprocess.call"), len(PY))}


def test_clang_counts_the_bom_s_bytes_and_its_preset_says_so(root: Path) -> None:
    undeclared = on_line_0(run(root, "clang"), "c", lambda f: "undeclared" in f.message)
    assert {span(finding)[0] for finding in undeclared.values()} == {C.index("x;")}


def test_gcc_display_columns_do_not_count_the_bom(root: Path) -> None:
    # Cells: a tab to the next multiple of 8, counted from after the BOM.
    undeclared = on_line_0(run(root, "gcc"), "c", lambda f: "undeclared (first" in f.message)
    assert {span(finding)[0] for finding in undeclared.values()} == {C.index("x;")}


def test_pyright_counts_the_bom_as_a_unit_and_its_preset_says_so(root: Path) -> None:
    wrong_type = on_line_0(run(root, "pyright"), "py", code("reportAssignmentType"))
    start = PY.index('"été"')
    assert {span(finding) for finding in wrong_type.values()} == {(start, start + 5)}


def test_shellcheck_counts_the_bom_as_a_character_and_its_preset_says_so(root: Path) -> None:
    unquoted = on_line_0(run(root, "shellcheck"), "sh", code("SC2086"))
    assert {span(finding)[0] for finding in unquoted.values()} == {SH.index("$1")}


def test_without_columns_count_bom_a_counting_tool_is_off_on_line_0(root: Path) -> None:
    shell = on_line_0(run(root, "semgrep", "columns_count_bom = false\n"), "py", code("shell-call"))
    start = PY.index("subprocess.call")
    assert span(shell["plain.py"])[0] == start
    assert span(shell["bom.py"])[0] == start + 3  # the BOM's 3 bytes, taken as text
