"""Each preset's ``suppress`` comment against the real tool: on a line with
two findings, the comment for one code silences that one only, and the
comment for both (joined with the preset's separator) silences both. On a
line that has a comment already, a ``line`` comment works after it, unless
the preset says ``first`` (mypy), when it works only before it.

One run per tool over its files: the line as it is, with one code
suppressed, with both (before and after another comment, for ``line``).
A tool that is not installed skips, except in CI.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass, field

import pytest

from acp_backend.validation.config import parse_config
from acp_backend.validation.runner import validator_environment
from acp_backend.validation.validator import RunTarget, run_validation
from acp_client.models import ResultOutcome, SuppressPlace, SuppressSpec, ValidationResult


@dataclass(frozen=True)
class Case:
    """A file whose line ``line`` has findings ``codes`` (both of them)."""

    suffix: str  # the three files are plain<suffix>, one<suffix>, both<suffix>
    text: str
    line: int
    codes: tuple[str, str]
    files: dict[str, str] = field(default_factory=dict)  # the tool's configuration


LONG = "x" * 90
CASES = {
    "ruff": Case(
        ".py",
        "import os; y = 1\n",
        0,
        ("F401", "E702"),
        {"ruff.toml": '[lint]\nselect = ["E", "F"]\n'},  # the same rules whatever ruff's defaults
    ),
    "flake8": Case(".py", "import os; y = 1\n", 0, ("F401", "E702")),
    "mypy": Case(".py", "x: int = str(undefined)\n", 0, ("assignment", "name-defined")),
    "pyright": Case(
        ".py",
        "x: int = str(undefined)\n",
        0,
        ("reportAssignmentType", "reportUndefinedVariable"),
    ),
    "bandit": Case(
        ".py",
        "import subprocess\n\n\ndef f(cmd):\n    subprocess.call(cmd, shell=True); eval(cmd)\n",
        4,
        ("B602", "B307"),
    ),
    "semgrep": Case(
        ".py",
        "def f(a, b):\n    eval(a); exec(b)\n",
        1,
        ("no-eval", "no-exec"),
        {
            ".semgrep.yml": "rules:\n"
            + "".join(
                f"  - id: no-{name}\n    pattern: {name}(...)\n    message: {name}\n"
                "    languages: [python]\n    severity: ERROR\n"
                for name in ("eval", "exec")
            )
        },
    ),
    "eslint": Case(
        ".js",
        "export const used = 1;\n  var unused = 2;\n",
        1,
        ("no-var", "no-unused-vars"),
        {
            "eslint.config.mjs": 'export default [{ rules: { "no-unused-vars": "error", '
            '"no-var": "error" } }];\n'
        },
    ),
    "shellcheck": Case(
        ".sh",
        "#!/bin/sh\nset -e\nif true; then\n\techo $foo\nfi\n",
        3,
        ("SC2154", "SC2086"),
    ),
    "yamllint": Case(".yaml", f"---\nkey:   {LONG}\n", 1, ("colons", "line-length")),
    "hadolint": Case(
        ".Dockerfile",
        "FROM debian:12\nRUN cd /tmp && apt-get install curl\n",
        1,
        ("DL3003", "DL3008"),
    ),
    "markdownlint": Case(
        ".md", "# Title\n\nsome\ttext with trailing spaces   \n", 2, ("MD010", "MD009")
    ),
}


OTHER_COMMENT = "# keep this"


def suppressed(
    text: str, line: int, spec: SuppressSpec, codes: tuple[str, ...], other: str = ""
) -> str:
    """``text`` with ``codes`` on ``line`` silenced as ``spec`` says; ``other``:
    put the comment ``before`` or ``after`` another comment on the line."""
    lines = text.split("\n")
    target = lines[line]
    if other == "before":
        lines[line] = f"{target}  {spec.render(codes)}  {OTHER_COMMENT}"
    elif other == "after":
        lines[line] = f"{target}  {OTHER_COMMENT}  {spec.render(codes)}"
    elif spec.where is SuppressPlace.LINE:
        lines[line] = f"{target}  {spec.render(codes)}"
    else:
        indent = target[: len(target) - len(target.lstrip())]
        lines.insert(line, indent + spec.render(codes))
    return "\n".join(lines)


def installed(preset: str) -> bool:
    executable = parse_config(f'[[validations]]\npreset = "{preset}"\n')[0].command[0]
    return shutil.which(executable, path=validator_environment().get("PATH")) is not None


def require(preset: str) -> None:
    if installed(preset):
        return
    reason = f"{preset} is not installed"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; the real-tool tests never skip in CI")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ValidationResult]:
    """Each installed tool run once over its three files."""
    runs = []
    for preset, case in CASES.items():
        if not installed(preset):
            continue
        (config,) = parse_config(f'[[validations]]\npreset = "{preset}"\n')
        assert config.suppress is not None, preset
        root = tmp_path_factory.mktemp(preset)
        for name, content in case.files.items():
            (root / name).write_text(content, encoding="utf-8")
        texts = {
            "plain": case.text,
            "one": suppressed(case.text, case.line, config.suppress, case.codes[:1]),
            "both": suppressed(case.text, case.line, config.suppress, case.codes),
        }
        if config.suppress.where is SuppressPlace.LINE:  # all of them #-comment languages
            for other in ("before", "after"):
                texts[other] = suppressed(case.text, case.line, config.suppress, case.codes, other)
        for stem, text in texts.items():
            (root / f"{stem}{case.suffix}").write_text(text, encoding="utf-8")
        runs.append(run_validation(config, RunTarget("r", root, "run")))

    async def run_all() -> list[ValidationResult]:
        return list(await asyncio.gather(*runs))

    return {result.validation: result for result in asyncio.run(run_all())}


def codes_on(result: ValidationResult, path: str, line: int) -> set[str | None]:
    return {
        finding.code
        for finding in result.findings
        if finding.location and (finding.location.path, finding.location.line) == (path, line)
    }


@pytest.mark.parametrize("preset", sorted(CASES))
def test_the_presets_comment_silences_the_tools_finding(
    preset: str, results: dict[str, ValidationResult]
) -> None:
    require(preset)
    result, case = results[preset], CASES[preset]
    assert result.outcome is ResultOutcome.COMPLETED, result.message
    spec = parse_config(f'[[validations]]\npreset = "{preset}"\n')[0].suppress
    assert spec is not None
    moved = 1 if spec.where is SuppressPlace.LINE_ABOVE else 0
    first, second = case.codes
    plain = codes_on(result, f"plain{case.suffix}", case.line)
    assert {first, second} <= plain, (plain, result.findings)
    # Only what the comment names goes, and the comment brings no finding of its own.
    one = codes_on(result, f"one{case.suffix}", case.line + moved)
    assert one == plain - {first}, (spec.render(case.codes[:1]), one)
    both = codes_on(result, f"both{case.suffix}", case.line + moved)
    assert both == plain - {first, second}, (spec.render(case.codes), both)
    if moved:
        assert codes_on(result, f"one{case.suffix}", case.line) == set()
        assert codes_on(result, f"both{case.suffix}", case.line) == set()
        return
    before = codes_on(result, f"before{case.suffix}", case.line)
    assert before == plain - {first, second}, before
    after = codes_on(result, f"after{case.suffix}", case.line)
    if spec.first:  # read only where the line's comment opens
        assert {first, second} <= after, after
    else:
        assert after == plain - {first, second}, after
