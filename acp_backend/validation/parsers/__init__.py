"""One parser per output format; each turns a tool's output into ``RawFinding``s."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain

from acp_backend.validation.config import OutputFormat, ValidationConfig
from acp_backend.validation.parsers.acp_json import parse_acp_json
from acp_backend.validation.parsers.pattern import parse_pattern
from acp_backend.validation.parsers.sarif import parse_sarif
from acp_backend.validation.raw import RawFinding


def parse_output(config: ValidationConfig, stdout: str, stderr: str) -> Iterator[RawFinding]:
    """The findings in a finished tool's output; raises ``OutputError`` when the
    output is not in the declared format. ``exit-code`` validations have none."""
    if config.format is OutputFormat.SARIF:
        return parse_sarif(stdout, config.columns)
    if config.format is OutputFormat.ACP_JSON:
        return parse_acp_json(stdout, config.columns)
    if config.format is OutputFormat.PATTERN:
        # GNU-style tools print to either stream (mypy: stdout, gcc: stderr).
        return chain.from_iterable(
            parse_pattern(text, config.pattern, config.columns, config.one_based_columns)
            for text in (stdout, stderr)
        )
    return iter(())
