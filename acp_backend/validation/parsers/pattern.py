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
    if not continuation_lines:  # the usual case: each finding is its line
        for line in iter_lines(text):
            match = search(line)
            if match is not None:
                yield read(match, line)
        return
    pending: RawFinding | None = None
    extra: list[str] = []
    for line in iter_lines(text):
        if pending is not None and line[:1].isspace() and line.strip():
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
    """A match as a finding. The pattern's groups are looked up once per
    output, not once per line: a save's hundreds of lines each paid for a
    dictionary of the groups and for the ones the pattern does not have."""

    def __init__(self, pattern: re.Pattern[str], unit: ColumnUnit, column_base: int) -> None:
        self._unit = unit
        self._column_base = column_base
        # The default pattern: ``message  [code]`` (equal, not identical, once pickled).
        self._codes_in_message = pattern.pattern == DEFAULT_PATTERN.pattern
        # Each named group's place in ``match.groups()``; -1: the pattern has none.
        at = {name: number - 1 for name, number in pattern.groupindex.items()}
        self._path = at.get("path", -1)
        self._line = at.get("line", -1)
        self._column = at.get("column", -1)
        self._end_line = at.get("end_line", -1)
        self._end_column = at.get("end_column", -1)
        self._message = at.get("message", -1)
        self._code = at.get("code", -1)
        self._severity = at.get("severity", -1)

    def __call__(self, match: re.Match[str], line: str) -> RawFinding:
        found = match.groups()
        message = ((found[self._message] if self._message >= 0 else None) or line).strip()
        code = (found[self._code] or None) if self._code >= 0 else None
        if self._codes_in_message:
            message, code = _split_code(message)
        base = self._column_base
        start_line = _number(found[self._line], 1) if self._line >= 0 else None
        column = _number(found[self._column], base) if self._column >= 0 else None
        end_line = end_column = None
        if self._end_column >= 0 and (text := found[self._end_column]):
            end_column = _number(text, base)
            if end_column is not None:
                if self._end_line >= 0:
                    end_line = _number(found[self._end_line], 1)
                if end_line is None:
                    end_line = start_line
        severity = severity_from_word(found[self._severity]) if self._severity >= 0 else None
        # Positional: a finding per output line, and keywords cost a third more.
        return RawFinding(
            message,
            (found[self._path] or None) if self._path >= 0 else None,
            start_line,
            column or 0,
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
    if text and len(text) <= 12 and text.isdecimal():
        number = int(text) - base
        return number if number > 0 else 0
    return None
