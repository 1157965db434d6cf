"""What a parser reads from a tool's output, before positions and paths are checked."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from acp_backend.validation.config import ColumnUnit
from acp_client.models import FixApplicability, SeverityHint

MAX_LINE = 16 * 1024  # characters of one output line a parser looks at
MAX_MESSAGE = 4000  # characters of a finding's message: a note, not a dump


class OutputError(ValueError):
    """The tool's output is not in the format its validation declares."""


class ToolFailure(Exception):
    """The tool said, in its output, that it could not do its job (SARIF's
    ``executionSuccessful: false`` or error notifications): the result is an
    error, with the tool's words and whatever findings it did report."""


# Not frozen: a parser builds one per finding, and a frozen dataclass sets
# each field through object.__setattr__ (a third of a 10,000-finding parse).
@dataclass(slots=True)
class RawRegion:
    """A place as the tool wrote it: 0-based line, columns in the finding's unit.

    ``end_column`` None with an ``end_line`` means the end of that line (SARIF);
    ``offset`` (with ``length``) is a character or byte offset into the file
    instead of a line and column (SARIF ``charOffset`` / ``byteOffset``).
    """

    path: str
    line: int = 0
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None
    offset: int | None = None
    length: int = 0
    offset_in_bytes: bool = False


@dataclass(frozen=True, slots=True)
class RawRelated:
    region: RawRegion
    message: str = ""


@dataclass(frozen=True, slots=True)
class RawEdit:
    region: RawRegion
    new_text: str


@dataclass(frozen=True, slots=True)
class RawFix:
    description: str
    edits: tuple[RawEdit, ...]
    applicability: FixApplicability = FixApplicability.SAFE  # the tool's word, if it says


@dataclass(slots=True)
class RawFinding:
    """A finding as the tool reported it.

    ``path`` is as written (relative to the working directory, absolute, or a
    ``file:`` URI). Lines and columns are already 0-based but columns are
    still counted in ``unit``; ``end_inclusive`` says whether ``end_column``
    is the range's last character (mypy) rather than one past it (SARIF).
    ``region`` carries SARIF's richer forms (whole lines, offsets).
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
    region: RawRegion | None = None
    related: tuple[RawRelated, ...] = ()
    fixes: tuple[RawFix, ...] = ()
    rule_description: str | None = None
    help_uri: str | None = None


_SEVERITY_WORDS = {
    "error": SeverityHint.ERROR,
    "fatal": SeverityHint.ERROR,
    "fatal error": SeverityHint.ERROR,
    "high": SeverityHint.ERROR,
    "warning": SeverityHint.WARNING,
    "warn": SeverityHint.WARNING,
    "medium": SeverityHint.WARNING,
    "note": SeverityHint.INFO,
    "info": SeverityHint.INFO,
    "information": SeverityHint.INFO,
    "message": SeverityHint.INFO,
    "low": SeverityHint.INFO,
    "hint": SeverityHint.HINT,
    "style": SeverityHint.HINT,
}


def iter_lines(text: str, limit: int = MAX_LINE) -> Iterator[str]:
    """The lines of ``text`` without their terminators, each cut at ``limit``
    characters, one at a time: a large output is never copied whole
    (``io.StringIO`` would, at 4 bytes a character)."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            end = size
        yield text[start : min(end, start + limit)].rstrip("\r")
        start = end + 1


def severity_from_word(word: str | None) -> SeverityHint | None:
    """A tool's own severity word (``error``, ``note``...) as a hint; None if unknown."""
    return _SEVERITY_WORDS.get(word.strip().lower()) if word else None


def applicability_from_word(word: str | None) -> FixApplicability:
    """A tool's word for how safe its fix is; none: safe (the tool offers it
    as a fix), a word this backend does not know: unsafe (never applied in
    bulk on a guess)."""
    if not word:
        return FixApplicability.SAFE
    normal = word.strip().lower().replace("_", "-").replace(" ", "-")
    if normal == "displayonly":
        normal = "display-only"
    try:
        return FixApplicability(normal)
    except ValueError:
        return FixApplicability.UNSAFE


def clip(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` cut to ``limit`` characters, saying so."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}… ({len(message) - limit} more characters)"
