"""What a parser reads from a tool's output, before positions and paths are checked."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from acp_backend.validation.config import ColumnUnit
from acp_client.models import SeverityHint


class OutputError(ValueError):
    """The tool's output is not in the format its validation declares."""


@dataclass(frozen=True, slots=True)
class RawFinding:
    """A finding as the tool reported it.

    ``path`` is as written (relative to the resource root, absolute, or a
    ``file:`` URI). Lines and columns are already 0-based but columns are
    still counted in ``unit``; ``end_inclusive`` says whether ``end_column``
    is the range's last character (mypy) rather than one past it (SARIF).
    """

    message: str
    path: str | None = None
    line: int | None = None
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None
    unit: ColumnUnit = ColumnUnit.CODE_POINTS
    end_inclusive: bool = False
    code: str | None = None
    severity: SeverityHint | None = None
    rule_description: str | None = None
    help_uri: str | None = None


_SEVERITY_WORDS = {
    "error": SeverityHint.ERROR,
    "fatal": SeverityHint.ERROR,
    "fatal error": SeverityHint.ERROR,
    "warning": SeverityHint.WARNING,
    "warn": SeverityHint.WARNING,
    "note": SeverityHint.INFO,
    "info": SeverityHint.INFO,
    "information": SeverityHint.INFO,
    "hint": SeverityHint.HINT,
}


def iter_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` without their terminators, one at a time: a large
    output is never copied whole (``io.StringIO`` would, at 4 bytes a character)."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            end = size
        yield text[start:end].rstrip("\r")
        start = end + 1


def severity_from_word(word: str | None) -> SeverityHint | None:
    """A tool's own severity word (``error``, ``note``...) as a hint; None if unknown."""
    return _SEVERITY_WORDS.get(word.strip().lower()) if word else None
