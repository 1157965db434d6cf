"""``pattern``: one finding per output line that a regular expression matches.

Named groups: ``path``, ``line`` (1-based), ``column``, ``end_line``,
``end_column`` (the range's last character, as mypy and GNU tools print it),
``message``, ``code``, ``severity``. Columns are 1-based unless the
validation says ``one_based_columns = false``, counted in code points
unless it says otherwise in ``columns``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from acp_backend.validation.config import ColumnUnit
from acp_backend.validation.raw import RawFinding, iter_lines, severity_from_word


def parse_pattern(
    text: str,
    pattern: re.Pattern[str],
    unit: ColumnUnit | None,
    one_based_columns: bool,
) -> Iterator[RawFinding]:
    column_base = 1 if one_based_columns else 0
    for line in iter_lines(text):
        match = pattern.search(line)
        if match is None:
            continue
        found = match.groupdict()
        start_line = _number(found.get("line"), 1)
        end_column = _number(found.get("end_column"), column_base)
        end_line = _number(found.get("end_line"), 1)
        if end_line is None and end_column is not None:
            end_line = start_line
        yield RawFinding(
            message=(found.get("message") or line).strip(),
            path=found.get("path") or None,
            line=start_line,
            column=_number(found.get("column"), column_base) or 0,
            end_line=end_line if end_column is not None else None,
            end_column=end_column,
            unit=unit or ColumnUnit.CODE_POINTS,
            end_inclusive=True,
            code=found.get("code") or None,
            severity=severity_from_word(found.get("severity")),
        )


def _number(text: str | None, base: int) -> int | None:
    """A 0-based number from a ``base``-based one in the output; None when absent."""
    if not text or not text.isdecimal():
        return None
    return max(int(text) - base, 0)
