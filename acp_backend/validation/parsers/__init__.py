"""One parser per output format; each turns a tool's output into ``RawFinding``s."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from itertools import chain

from acp_backend.validation.config import OutputFormat, Stream, ValidationConfig
from acp_backend.validation.parsers.acp_json import parse_acp_json
from acp_backend.validation.parsers.checkstyle import parse_checkstyle
from acp_backend.validation.parsers.json_map import parse_json_map
from acp_backend.validation.parsers.pattern import parse_pattern
from acp_backend.validation.parsers.sarif import parse_sarif
from acp_backend.validation.raw import RawFinding


def parse_output(config: ValidationConfig, stdout: str, stderr: str) -> Iterator[RawFinding]:
    """The findings in a finished tool's output (``stdout`` is the report file's
    text for an ``output_file`` validation); raises ``OutputError`` when the
    output is not in the declared format, ``ToolFailure`` (after the findings)
    when the tool says it failed. ``exit-code`` validations have none."""
    findings = _parse(config, _streams(config, stdout, stderr))
    if not config.code_columns:
        return findings
    return (_unit_by_code(config, raw) for raw in findings)


def _streams(config: ValidationConfig, stdout: str, stderr: str) -> tuple[str, ...]:
    # GNU-style tools print to either stream (mypy: stdout, gcc: stderr).
    default = Stream.BOTH if config.format is OutputFormat.PATTERN else Stream.STDOUT
    stream = config.stream or default
    if config.output_file is not None or stream is Stream.STDOUT:
        return (stdout,)
    return (stderr,) if stream is Stream.STDERR else (stdout, stderr)


def _parse(config: ValidationConfig, texts: tuple[str, ...]) -> Iterator[RawFinding]:
    if config.format is OutputFormat.PATTERN:
        return chain.from_iterable(
            parse_pattern(
                text,
                config.pattern,
                config.columns,
                config.one_based_columns,
                config.continuation_lines,
            )
            for text in texts
        )
    text = "\n".join(texts) if len(texts) > 1 else texts[0]
    if config.format is OutputFormat.SARIF:
        return parse_sarif(text, config.columns, config.tool_columns)
    if config.format is OutputFormat.ACP_JSON:
        return parse_acp_json(text, config.columns)
    if config.format is OutputFormat.CHECKSTYLE:
        return parse_checkstyle(text, config.columns)
    if config.format is OutputFormat.JSON and config.mapping is not None:
        return parse_json_map(text, config.mapping, config.columns, config.one_based_columns)
    return iter(())


def _unit_by_code(config: ValidationConfig, raw: RawFinding) -> RawFinding:
    """The unit for the finding's code (longest matching prefix), if one is set."""
    code = raw.code or ""
    prefixes = [prefix for prefix in config.code_columns if code.startswith(prefix)]
    if not prefixes:
        return raw
    return replace(raw, unit=config.code_columns[max(prefixes, key=len)])
