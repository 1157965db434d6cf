"""``acp.toml``: the validations a resource declares.

Each ``[[validations]]`` table becomes a ``ValidationConfig``. Errors name
the file, the line and the field; ``ConfigCache`` re-reads the file when it
changes and keeps the last valid configuration in force when it breaks.
"""

from __future__ import annotations

import json
import logging
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from acp_backend.validation.presets import PRESETS, preset_names
from acp_client.models import (
    CODE_PLACEHOLDER,
    CODES_PLACEHOLDER,
    Location,
    SeverityHint,
    SuppressPlace,
    SuppressSpec,
    ValidationMode,
    ValidationSpec,
)
from acp_client.paths import CONFIG_FILE

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0
FILES_PLACEHOLDER = "{files}"


MAX_TIMEOUT = 24 * 3600.0  # a day: beyond it "no limit" is what was meant, and refused


class ColumnUnit(StrEnum):
    UTF16 = "utf-16"
    CODE_POINTS = "code-points"
    BYTES = "bytes"
    DISPLAY = "display"  # terminal cells: tab stops of 8, wide characters 2 (gcc)


UNIT_DOCS: Mapping[ColumnUnit, str] = {
    ColumnUnit.UTF16: "UTF-16 code units (eslint, tsc, pyright, markdownlint; SARIF's default)",
    ColumnUnit.CODE_POINTS: "Unicode characters (ruff, shellcheck, yamllint, hadolint)",
    ColumnUnit.BYTES: "UTF-8 bytes (bandit, semgrep, mypy --no-native-parser, clang)",
    ColumnUnit.DISPLAY: "terminal cells: tab stops of 8, wide characters 2 (gcc)",
}


class OutputFormat(StrEnum):
    SARIF = "sarif"
    PATTERN = "pattern"
    EXIT_CODE = "exit-code"
    ACP_JSON = "acp-json"
    CHECKSTYLE = "checkstyle"
    JSON = "json"


FORMAT_DOCS: Mapping[OutputFormat, str] = {
    OutputFormat.SARIF: "SARIF 2.1.0, read in full (ruff, bandit, semgrep, CodeQL)",
    OutputFormat.PATTERN: "each output line matched by `pattern` (default: GNU file:line:col: "
    "message)",
    OutputFormat.EXIT_CODE: "no locations: passed means an ok_status exit status",
    OutputFormat.ACP_JSON: "one contract Finding per line, as JSON (custom scripts)",
    OutputFormat.CHECKSTYLE: "checkstyle XML (<file><error line column message source/>)",
    OutputFormat.JSON: "the tool's own JSON report, read through `mapping`",
}


class Stream(StrEnum):
    STDOUT = "stdout"
    STDERR = "stderr"
    BOTH = "both"


PATTERN_GROUPS = frozenset(
    {"path", "line", "column", "end_line", "end_column", "message", "code", "severity"}
)

# GNU style, ``file:line[:column]: [severity:] message``: mypy, gcc, flake8,
# pylint's parseable output. Columns 1-based. Linear: no part can match what
# the next one could, and a trailing ``[code]`` is split off without a regex
# (``parsers.pattern``), because ``.*?`` before optional trailing groups
# backtracks quadratically on long runs of spaces.
DEFAULT_PATTERN = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?:(?P<column>\d+):)?"
    r"(?:(?P<end_line>\d+):(?P<end_column>\d+):)?[ \t]*"
    r"(?:(?P<severity>fatal error|error|warning|note|info|hint)[ \t]*:)?"
    r"(?P<message>.*)"
)


class ConfigError(Exception):
    """A problem in an ``acp.toml``: where it is (file, 1-based line, field) and what."""

    def __init__(self, file: str, line: int, field_name: str | None, message: str) -> None:
        self.file, self.line, self.field, self.message = file, line, field_name, message
        where = f"{file}:{line}"
        super().__init__(
            f"{where}: {field_name}: {message}" if field_name else f"{where}: {message}"
        )


@dataclass(frozen=True)
class JsonMapping:
    """Where a ``json`` tool puts each finding's fields (``parsers.json_map``)."""

    findings: str
    fields: Mapping[str, str]
    severities: Mapping[str, str] = field(default_factory=dict)
    one_based_lines: bool = True
    failures: str | None = None  # records saying the tool could not check something
    failure_message: str = "reason"
    failure_path: str | None = None
    fix_fields: Mapping[str, str] = field(default_factory=dict)  # ``fixes`` and ``fix_*``


@dataclass(frozen=True)
class ValidationConfig:
    """One declared validation, checked and ready to run."""

    name: str
    mode: ValidationMode
    command: tuple[str, ...] | str  # a string only with ``shell``
    format: OutputFormat
    line: int  # 1-based line of its ``[[validations]]`` header
    shell: bool = False
    pattern: re.Pattern[str] = DEFAULT_PATTERN
    columns: ColumnUnit | None = None  # None: the format's (or the tool's) own unit
    tool_columns: Mapping[str, ColumnUnit] = field(default_factory=dict)  # SARIF run's tool
    code_columns: Mapping[str, ColumnUnit] = field(default_factory=dict)  # by code prefix
    one_based_columns: bool = True
    columns_count_bom: bool = False  # the tool counts a UTF-8 BOM in line 1's columns
    timeout: float = DEFAULT_TIMEOUT
    applies_to: tuple[str, ...] = ()
    description: str = ""
    fix: tuple[str, ...] | str | None = None
    preset: str | None = None
    cwd: str = ""  # relative to the resource root; "" is the root
    env: Mapping[str, str] = field(default_factory=dict)
    stream: Stream | None = None  # None: the format's own (pattern: both, others: stdout)
    output_file: str | None = None  # relative to cwd
    min_level: SeverityHint | None = None
    path_map: Mapping[str, str] = field(default_factory=dict)  # tool's prefix -> root-relative
    mapping: JsonMapping | None = None
    continuation_lines: bool = False
    ok_status: tuple[int, ...] = (0,)
    suppress: SuppressSpec | None = None

    @property
    def uses_files(self) -> bool:
        """Whether the command names the files to check (``{files}``)."""
        return FILES_PLACEHOLDER in self.command

    @property
    def declared_at(self) -> Location:
        return Location(path=CONFIG_FILE, line=self.line - 1, character=0)

    def spec(self) -> ValidationSpec:
        return ValidationSpec(
            name=self.name,
            mode=self.mode,
            description=self.description,
            applies_to=self.applies_to,
            has_fix=self.fix is not None,
            declared_at=self.declared_at,
            suppress=self.suppress,
        )

    def applies_to_any(self, paths: tuple[str, ...]) -> bool:
        """Whether a change to one of ``paths`` (relative, POSIX) concerns this validation."""
        if not self.applies_to:
            return True
        return any(glob_matches(glob, path) for glob in self.applies_to for path in paths)


def glob_matches(glob: str, path: str) -> bool:
    """``*`` and ``?`` stay within a path segment, ``**`` spans segments; a glob
    without ``/`` is matched against the file name alone (``*.py``)."""
    target = path if "/" in glob else path.rsplit("/", 1)[-1]
    return _glob_regex(glob).fullmatch(target) is not None


def _glob_regex(glob: str) -> re.Pattern[str]:
    parts: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            parts.append(".*")
            i += 2
        else:
            char = glob[i]
            parts.append({"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char)))
            i += 1
    return re.compile("".join(parts))


_Unit = Literal["utf-16", "code-points", "bytes", "display"]
_Level = Literal["error", "warning", "info", "hint"]
_MAPPED_FIELDS = (
    "path", "line", "column", "end_line", "end_column", "message", "detail", "code", "severity",
    "rule_description", "help_uri",
)  # fmt: skip
_FIX_FIELDS = (
    "fixes", "fix_edits", "fix_text", "fix_line", "fix_column", "fix_end_line",
    "fix_end_column", "fix_description", "fix_applicability",
)  # fmt: skip


class _Mapping(BaseModel):
    """``mapping`` of a ``json`` validation: selectors into the tool's JSON."""

    model_config = ConfigDict(extra="forbid", strict=True)

    findings: str = Field(
        description="Selects the records: names joined by `.`, `[]` for "
        "each element of an array, `[N]` for one"
    )
    path: str | None = Field(
        default=None, description="The record's file (`^` steps up to an enclosing object)"
    )
    line: str | None = Field(default=None, description="The record's line")
    column: str | None = Field(default=None, description="The record's column")
    end_line: str | None = Field(default=None, description="Where the finding ends: its line")
    end_column: str | None = Field(
        default=None, description="Where it ends: its column (exclusive)"
    )
    message: str = Field(description="The record's message")
    detail: str | None = Field(default=None, description="Appended to the message when present")
    code: str | None = Field(default=None, description="The rule's id")
    severity: str | None = Field(default=None, description="The tool's own level")
    rule_description: str | None = Field(default=None, description="What the rule checks")
    help_uri: str | None = Field(default=None, description="Where the rule is documented")
    severities: dict[str, _Level] = Field(
        default_factory=dict,
        description="The tool's levels (`2`, `style`) to error, warning, info or hint",
    )
    one_based_lines: bool = Field(default=True, description="false for 0-based lines")
    failures: str | None = Field(
        default=None,
        description="Selects records saying the tool could not check something (bandit's "
        "`errors[]`): the result is an error quoting them, with the findings it did report",
    )
    failure_message: str = Field(
        default="reason", description="A failure record's words, relative to it"
    )
    failure_path: str | None = Field(
        default=None, description="A failure record's file, put before its words"
    )
    fixes: str | None = Field(
        default=None,
        description="Selects a record's fixes, relative to it (ruff's `fix`); each fix's "
        "edits apply to the record's file",
    )
    fix_edits: str = Field(default="edits[]", description="Selects a fix's edits, relative to it")
    fix_text: str = Field(default="content", description="An edit's new text")
    fix_line: str | None = Field(default=None, description="Where an edit starts: its line")
    fix_column: str | None = Field(default=None, description="Where an edit starts: its column")
    fix_end_line: str | None = Field(default=None, description="Where an edit ends: its line")
    fix_end_column: str | None = Field(
        default=None, description="Where an edit ends: its column (exclusive)"
    )
    fix_description: str | None = Field(default=None, description="What the fix does")
    fix_applicability: str | None = Field(
        default=None,
        description="How safe the tool says the fix is (`safe`, `unsafe`, `display-only`); "
        "absent: safe, a word not known: unsafe",
    )


class _Suppress(BaseModel):
    """``suppress``: the comment that silences one finding (``SuppressSpec`` on the wire)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    comment: str = Field(description="The comment, with {codes} once: `# noqa: {codes}`")
    where: Literal["line", "line_above"] = Field(
        default="line",
        description="`line`: at the end of the finding's line; `line_above`: on a line of its "
        "own above it, indented like it",
    )
    separator: str = Field(
        default=", ", description="Joins codes in one comment (`# noqa: E501, F401`)"
    )
    code: str = Field(
        default=CODE_PLACEHOLDER, description="How each code is written: `rule:{code}` (yamllint)"
    )
    first: bool = Field(
        default=False,
        description="The tool reads it only as the line's first comment (mypy): write it "
        "before any other",
    )

    @field_validator("comment")
    @classmethod
    def _one_codes_placeholder(cls, value: str) -> str:
        if value.count(CODES_PLACEHOLDER) != 1:
            raise ValueError(f"must contain {CODES_PLACEHOLDER} exactly once: {value!r}")
        if not value.replace(CODES_PLACEHOLDER, "").strip():
            raise ValueError(f"must say more than {CODES_PLACEHOLDER} (the tool's comment)")
        return _one_line(value)

    @field_validator("code")
    @classmethod
    def _one_code_placeholder(cls, value: str) -> str:
        if value.count(CODE_PLACEHOLDER) != 1:
            raise ValueError(f"must contain {CODE_PLACEHOLDER} exactly once: {value!r}")
        return _one_line(value)

    @field_validator("separator")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value:
            raise ValueError('must not be empty (", ", ",", " ")')
        return _one_line(value)


def _one_line(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError("must fit on one line")
    return value


class _Declaration(BaseModel):
    """The shape of one ``[[validations]]`` table, as written (preset merged in).

    Each field's description is its one-line doc in ``validation.schema``
    (docs/validations.md's field table says the same, at more length).
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="Letters, digits, _ . -; unique in the file; the diagnostics' source "
        "(default: the preset's name)",
    )
    mode: Literal["required", "informational"] = Field(
        description="required: a failure is an Error and fails acp-lsp check; informational: "
        "a Warning (default with a preset: required)"
    )
    preset: str | None = Field(
        default=None, description="A tool's ready-made fields; the table's own fields win"
    )
    command: list[str] | str = Field(
        description="The argv to run (no shell); {files} stands for the files to check"
    )
    shell: bool = Field(
        default=False, description="Run command, written as one string, through /bin/sh"
    )
    format: Literal["sarif", "pattern", "exit-code", "acp-json", "checkstyle", "json"] = Field(
        default="exit-code", description="How to read the tool's output"
    )
    pattern: str | None = Field(
        default=None,
        description="For format = pattern: a regular expression with named groups path, line, "
        "column, end_line, end_column, message, code, severity",
    )
    columns: _Unit | dict[str, _Unit] | None = Field(
        default=None,
        description="The unit of the tool's columns (for SARIF also a table per tool); "
        "default: the format's or the tool's own",
    )
    code_columns: dict[str, _Unit] = Field(
        default_factory=dict,
        description='Column units by code prefix, for tools that mix them: { F = "bytes" }',
    )
    one_based_columns: bool = Field(default=True, description="Whether columns count from 1")
    columns_count_bom: bool = Field(
        default=False, description="The tool counts a UTF-8 BOM in line 1's columns"
    )
    timeout: float = Field(
        default=DEFAULT_TIMEOUT,
        gt=0,
        le=MAX_TIMEOUT,
        description="Seconds before the tool's whole process group is killed (at most a day)",
    )
    applies_to: list[str] = Field(
        default_factory=list,
        description="Globs of the files whose save runs it (* within a segment, ** across); "
        "empty: every file",
    )
    description: str = Field(default="", description="Shown in listings")
    fix: list[str] | str | None = Field(
        default=None,
        description="A command that fixes the files in place, or prints its fix as a diff; "
        "Propose fix runs it in a sandbox",
    )
    cwd: str = Field(default="", description="Where to run, relative to the resource root (no ..)")
    env: dict[str, str] = Field(
        default_factory=dict, description="Variables added to the tool's environment"
    )
    stream: Literal["stdout", "stderr", "both"] | None = Field(
        default=None,
        description="Which output to read (default: both for pattern, stdout otherwise)",
    )
    output_file: str | None = Field(
        default=None,
        description="Read the report from this file (relative to cwd) instead of stdout",
    )
    min_level: _Level | None = Field(
        default=None, description="Leave out findings the tool rates lower"
    )
    path_map: dict[str, str] = Field(
        default_factory=dict,
        description="Prefixes of paths a tool reports from elsewhere, to paths in the resource",
    )
    mapping: _Mapping | None = Field(
        default=None, description="For format = json: where each finding's fields are"
    )
    continuation_lines: bool = Field(
        default=False,
        description="For pattern: indented lines after a finding belong to its message (tsc)",
    )
    ok_status: list[int] = Field(
        default_factory=lambda: [0],
        description="Exit statuses that mean the tool ran fine (ripgrep: [0, 1])",
    )
    suppress: _Suppress | None = Field(
        default=None,
        description="The comment that silences one finding: "
        '{ comment = "# noqa: {codes}", where = "line", separator = ", " }',
    )

    @field_validator("pattern")
    @classmethod
    def _compiles_with_known_groups(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        unknown = set(compiled.groupindex) - PATTERN_GROUPS
        if unknown:
            raise ValueError(
                f"unknown group(s) {', '.join(sorted(unknown))}; "
                f"allowed: {', '.join(sorted(PATTERN_GROUPS))}"
            )
        return value

    @field_validator("cwd", "output_file")
    @classmethod
    def _stays_inside(cls, value: str | None) -> str | None:
        if value and (value.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", value)):
            raise ValueError("must be a relative path inside the resource (no '..')")
        return value

    @field_validator("env")
    @classmethod
    def _no_nul(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            if "\0" in key or "\0" in text or "=" in key or not key:
                raise ValueError(f"{key!r}: a variable name must be non-empty, without = or NUL")
        return value


def parse_config(text: str, file: str = CONFIG_FILE) -> tuple[ValidationConfig, ...]:
    """The validations declared in ``text``; ``ConfigError`` on the first problem."""
    text = text.removeprefix("\ufeff")  # editors on Windows write a BOM
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        raise ConfigError(
            file, int(found[1]) if found else 1, None, f"invalid TOML: {exc}"
        ) from None
    if "validation" in document and "validations" not in document:
        raise ConfigError(
            file,
            _key_line(text, 0, len(text), "validation") or _singular_line(text),
            "validation",
            "unknown key; did you mean [[validations]] (plural)?",
        )
    tables = document.get("validations", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(
            file,
            _key_line(text, 0, len(text), "validations") or 1,
            "validations",
            "must be an array of tables ([[validations]])",
        )
    spans = _table_spans(text, len(tables))
    # Linear in the number of tables: a file declaring 10,000 of them took
    # 7 s (each header's line counted from the top, each name compared
    # with every earlier one), and the backend answers nothing meanwhile.
    configs: dict[str, ValidationConfig] = {}
    line, counted = 1, 0
    for index, (table, (start, end)) in enumerate(zip(tables, spans, strict=True)):
        line, counted = line + text.count("\n", counted, start), start
        located = _Locator(file, text, start, end, f"validations[{index + 1}]", line)
        config = _build(table, located)
        first = configs.get(config.name)
        if first is not None:
            raise located.error(
                "name",
                f"{json.dumps(config.name)} is declared twice (first at line {first.line}); "
                "give each a distinct name",
            )
        configs[config.name] = config
    return tuple(configs.values())


@dataclass(frozen=True)
class _Locator:
    """Turns a field of one table into ``ConfigError``s that point at its line."""

    file: str
    text: str
    start: int  # character offsets of the table in the text
    end: int
    label: str
    header_line: int  # 1-based, of the table's [[validations]] header

    def error(self, field_name: str | None, message: str, inner: str = "") -> ConfigError:
        """``inner``: the key inside the field's table (``suppress.comment``)."""
        line = _key_line(self.text, self.start, self.end, field_name) if field_name else None
        qualified = f"{self.label}.{field_name}" if field_name else self.label
        if field_name and inner:
            line = _key_line(self.text, self.start, self.end, inner) or line
            qualified = f"{qualified}.{inner}"
        return ConfigError(self.file, line or self.header_line, qualified, message)


def preset_fills(name: str) -> dict[str, Any]:
    """What ``preset = NAME`` fills in, as written in acp.toml: its own name,
    mode ``required``, then the preset's fields; the table's own keys win."""
    return {"name": name, "mode": ValidationMode.REQUIRED.value, **PRESETS[name].fields}


def _build(table: dict[str, Any], at: _Locator) -> ValidationConfig:
    preset = table.get("preset")
    if preset is not None:
        if not isinstance(preset, str) or preset not in PRESETS:
            raise at.error("preset", f"unknown preset {preset!r}; known: {preset_names()}")
        fills = preset_fills(preset)
        if table.get("format", fills.get("format")) != fills.get("format"):
            fills.pop("mapping", None)  # a format of its own: the preset's JSON reading is moot
        table = {**fills, **table}
    try:
        declared = _Declaration.model_validate(table)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(part) for part in first["loc"]]
        raise at.error(
            loc[0] if loc else None,
            _explain(first["type"], first["msg"], loc),
            ".".join(loc[1:2]) if loc[:1] in (["mapping"], ["suppress"]) else "",
        ) from None
    _check_command(declared.command, declared.shell, "command", at)
    if declared.fix is not None:
        _check_command(declared.fix, declared.shell, "fix", at)
    if declared.pattern is not None and declared.format != "pattern":
        raise at.error("pattern", f'only applies to format = "pattern", not {declared.format!r}')
    if (declared.mapping is None) != (declared.format != "json"):
        raise at.error("mapping", 'is required by format = "json", and only used by it')
    columns = declared.columns if isinstance(declared.columns, str) else None
    tool_columns = declared.columns if isinstance(declared.columns, dict) else {}
    return ValidationConfig(
        name=declared.name,
        mode=ValidationMode(declared.mode),
        command=_argv(declared.command),
        shell=declared.shell,
        format=OutputFormat(declared.format),
        pattern=re.compile(declared.pattern) if declared.pattern else DEFAULT_PATTERN,
        columns=ColumnUnit(columns) if columns else None,
        tool_columns={tool.lower(): ColumnUnit(unit) for tool, unit in tool_columns.items()},
        code_columns={code: ColumnUnit(unit) for code, unit in declared.code_columns.items()},
        one_based_columns=declared.one_based_columns,
        columns_count_bom=declared.columns_count_bom,
        timeout=declared.timeout,
        applies_to=tuple(declared.applies_to),
        description=declared.description,
        fix=_argv(declared.fix) if declared.fix is not None else None,
        line=at.header_line,
        preset=declared.preset,
        cwd=declared.cwd.strip("/"),
        env=declared.env,
        stream=Stream(declared.stream) if declared.stream else None,
        output_file=declared.output_file,
        min_level=SeverityHint(declared.min_level) if declared.min_level else None,
        path_map=declared.path_map,
        mapping=_json_mapping(declared.mapping),
        continuation_lines=declared.continuation_lines,
        ok_status=tuple(declared.ok_status),
        suppress=_suppress_spec(declared.suppress),
    )


def _suppress_spec(declared: _Suppress | None) -> SuppressSpec | None:
    if declared is None:
        return None
    return SuppressSpec(
        comment=declared.comment,
        where=SuppressPlace(declared.where),
        separator=declared.separator,
        code=declared.code,
        first=declared.first,
    )


def _json_mapping(declared: _Mapping | None) -> JsonMapping | None:
    if declared is None:
        return None
    fields = {
        name: selector
        for name in _MAPPED_FIELDS
        if (selector := getattr(declared, name)) is not None
    }
    fix_fields = (
        {
            name: selector
            for name in _FIX_FIELDS
            if (selector := getattr(declared, name)) is not None
        }
        if declared.fixes is not None
        else {}
    )
    return JsonMapping(
        declared.findings,
        fields,
        declared.severities,
        declared.one_based_lines,
        declared.failures,
        declared.failure_message,
        declared.failure_path,
        fix_fields,
    )


DECLARATION: type[BaseModel] = _Declaration
"""The model of one ``[[validations]]`` table (``validation.schema`` reads it)."""
NESTED_TABLES: Mapping[str, type[BaseModel]] = {"mapping": _Mapping, "suppress": _Suppress}
"""The fields of ``DECLARATION`` that are tables with keys of their own."""


def _explain(error_type: str, message: str, loc: list[str]) -> str:
    if error_type == "extra_forbidden":
        model = NESTED_TABLES.get(loc[0], _Declaration) if len(loc) == 2 else _Declaration
        return f"unknown field (known: {', '.join(model.model_fields)})"
    if error_type == "missing":
        return "required field is missing"
    if error_type == "model_type":
        return "must be a table: { key = value, ... }"
    return message.removeprefix("Value error, ")


def _check_command(command: list[str] | str, shell: bool, name: str, at: _Locator) -> None:
    if shell and not isinstance(command, str):
        raise at.error(name, "with shell = true, write the command as one string")
    if not shell and isinstance(command, str):
        raise at.error(name, "must be a list of arguments (or set shell = true to use a shell)")
    words = [command] if isinstance(command, str) else command
    if not words or not words[0].strip():
        raise at.error(name, "must not be empty")
    if any("\0" in word for word in words):
        raise at.error(name, "contains a NUL character, which no command line can carry")


def _argv(command: list[str] | str) -> tuple[str, ...] | str:
    return command if isinstance(command, str) else tuple(command)


_TABLE_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*validations[ \t]*\]\]", re.M)
_ANY_HEADER = re.compile(r"^[ \t]*\[", re.M)


def _table_spans(text: str, count: int) -> list[tuple[int, int]]:
    """Character spans of the ``[[validations]]`` tables; the whole text for
    tables written inline (``validations = [{...}]``), which have no header."""
    headers = [m.start() for m in _TABLE_HEADER.finditer(text)]
    if len(headers) != count:
        return [(0, len(text))] * count
    spans = []
    for start in headers:
        after_header = text.find("\n", start)
        following = _ANY_HEADER.search(text, after_header + 1) if after_header >= 0 else None
        spans.append((start, following.start() if following else len(text)))
    return spans


def _singular_line(text: str) -> int:
    found = re.search(r"^[ \t]*\[\[?[ \t]*validation[ \t]*\]", text, re.M)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _key_line(text: str, start: int, end: int, key: str) -> int | None:
    found = re.compile(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", re.M).search(
        text, start, end
    )
    return text.count("\n", 0, found.start()) + 1 if found else None


@dataclass
class LoadedConfig:
    """What is in force for a resource, and the current file's problem if any."""

    validations: tuple[ValidationConfig, ...] = ()
    error: ConfigError | None = None


@dataclass
class _CacheEntry:
    stamp: tuple[int, int] | None
    loaded: LoadedConfig = field(default_factory=LoadedConfig)


class ConfigCache:
    """Reads each resource's ``acp.toml`` again whenever its mtime or size changes."""

    def __init__(self) -> None:
        self._entries: dict[Path, _CacheEntry] = {}

    def get(self, root: Path) -> LoadedConfig:
        path = root / CONFIG_FILE
        try:
            info = path.stat()
            stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except FileNotFoundError:
            stamp = None
        entry = self._entries.get(path)
        if entry is not None and entry.stamp == stamp:
            return entry.loaded
        previous = entry.loaded.validations if entry else ()
        loaded = self._read(path, stamp, previous)
        self._entries[path] = _CacheEntry(stamp, loaded)
        return loaded

    @staticmethod
    def _read(
        path: Path, stamp: tuple[int, int] | None, previous: tuple[ValidationConfig, ...]
    ) -> LoadedConfig:
        if stamp is None:
            return LoadedConfig()
        try:
            data = path.read_bytes()
            return LoadedConfig(parse_config(data.decode("utf-8-sig"), str(path)))
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            error = ConfigError(str(path), line, None, f"not UTF-8 text: {exc.reason}")
        except OSError as exc:
            error = ConfigError(str(path), 1, None, f"cannot read: {exc.strerror}")
        except ConfigError as exc:
            error = exc
        kept = "the last valid declarations stay in force" if previous else "no validations"
        log.warning("%s; %s until it is fixed", error, kept)
        return LoadedConfig(previous, error)
