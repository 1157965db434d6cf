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
    column_base = 1 if one_based_columns else 0
    codes_in_message = (
        pattern.pattern == DEFAULT_PATTERN.pattern
    )  # equal, not identical, once pickled
    pending: RawFinding | None = None
    extra: list[str] = []
    for line in iter_lines(text):
        if pending is not None and continuation_lines and line[:1].isspace() and line.strip():
            extra.append(line.strip())
            continue
        if pending is not None:
            yield _with_continuation(pending, extra)
            pending, extra = None, []
        match = pattern.search(line)
        if match is not None:
            pending = _finding(
                match, line, unit or ColumnUnit.CODE_POINTS, column_base, codes_in_message
            )
    if pending is not None:
        yield _with_continuation(pending, extra)


def _finding(
    match: re.Match[str], line: str, unit: ColumnUnit, column_base: int, codes_in_message: bool
) -> RawFinding:
    found = match.groupdict()
    message = (found.get("message") or line).strip()
    code = found.get("code") or None
    if codes_in_message:  # the default pattern: ``message  [code]``
        message, code = _split_code(message)
    start_line = _number(found.get("line"), 1)
    end_column = _number(found.get("end_column"), column_base)
    end_line = _number(found.get("end_line"), 1)
    if end_line is None and end_column is not None:
        end_line = start_line
    return RawFinding(
        message=message,
        path=found.get("path") or None,
        line=start_line,
        column=_number(found.get("column"), column_base) or 0,
        end_line=end_line if end_column is not None else None,
        end_column=end_column,
        unit=unit,
        end_inclusive=True,
        code=code,
        severity=severity_from_word(found.get("severity")),
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
