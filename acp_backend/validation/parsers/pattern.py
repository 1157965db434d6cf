"""``pattern``: one finding per output line that a regular expression matches.

Named groups: ``path``, ``line`` (1-based), ``column``, ``end_line``,
``end_column`` (the range's last character, as mypy and GNU tools print it),
``message``, ``code``, ``severity``. Columns are 1-based unless the
validation says ``one_based_columns = false``, counted in code points
unless it says otherwise in ``columns``. With ``continuation_lines``, the
indented lines after a finding belong to its message (tsc).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from acp_backend.validation.config import DEFAULT_PATTERN, ColumnUnit
from acp_backend.validation.raw import RawFinding, iter_lines, severity_from_word


def parse_pattern(
    text: str,
    pattern: re.Pattern[str],
    unit: ColumnUnit | None,
    one_based_columns: bool,
    continuation_lines: bool = False,
) -> Iterator[RawFinding]:
    read = _Reader(pattern, unit or ColumnUnit.CODE_POINTS, 1 if one_based_columns else 0)
    search = pattern.search
    pending: RawFinding | None = None
    extra: list[str] = []
    for line in iter_lines(text):
        if pending is not None and continuation_lines and line[:1].isspace() and line.strip():
            extra.append(line.strip())
            continue
        if pending is not None:
            yield _with_continuation(pending, extra)
            pending, extra = None, []
        match = search(line)
        if match is not None:
            pending = read(match, line)
    if pending is not None:
        yield _with_continuation(pending, extra)


class _Reader:
    """A match as a finding. The pattern's groups are looked at once per
    output, not once per line: a save's hundreds of lines each paid for the
    groups the pattern does not have."""

    def __init__(self, pattern: re.Pattern[str], unit: ColumnUnit, column_base: int) -> None:
        groups = pattern.groupindex
        self._unit = unit
        self._column_base = column_base
        # The default pattern: ``message  [code]`` (equal, not identical, once pickled).
        self._codes_in_message = pattern.pattern == DEFAULT_PATTERN.pattern
        self._has_message = "message" in groups
        self._has_code = "code" in groups
        self._has_ends = "end_line" in groups or "end_column" in groups
        self._has_severity = "severity" in groups

    def __call__(self, match: re.Match[str], line: str) -> RawFinding:
        found = match.groupdict()
        message = ((found["message"] if self._has_message else None) or line).strip()
        code = (found["code"] or None) if self._has_code else None
        if self._codes_in_message:
            message, code = _split_code(message)
        base = self._column_base
        start_line = _number(found.get("line"), 1)
        end_line = end_column = None
        if self._has_ends:
            end_column = _number(found.get("end_column"), base)
            if end_column is not None:
                end_line = _number(found.get("end_line"), 1)
                if end_line is None:
                    end_line = start_line
        severity = severity_from_word(found["severity"]) if self._has_severity else None
        # Positional: a finding per output line, and keywords cost a third more.
        return RawFinding(
            message,
            found.get("path") or None,
            start_line,
            _number(found.get("column"), base) or 0,
            end_line,
            end_column,
            self._unit,
            True,  # end_inclusive
            code,
            severity,
        )


def _split_code(message: str) -> tuple[str, str | None]:
    """``message  [code]`` -> (message, code), in linear time."""
    if not message.endswith("]"):
        return message, None
    opening = message.rfind("[")
    code = message[opening + 1 : -1]
    if opening <= 0 or not message[opening - 1].isspace() or not code or " " in code:
        return message, None
    return message[:opening].rstrip(), code


def _with_continuation(finding: RawFinding, extra: list[str]) -> RawFinding:
    if not extra:
        return finding
    return replace(finding, message="\n".join([finding.message, *extra]))


def _number(text: str | None, base: int) -> int | None:
    """A 0-based number from a ``base``-based one in the output; None when absent."""
    if not text or not text.isdecimal() or len(text) > 12:
        return None
    return max(int(text) - base, 0)
