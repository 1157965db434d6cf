"""Text as the contract sees it: LSP lines, code-point columns, edits.

Lines end at ``\\r\\n``, ``\\r`` or ``\\n`` (LSP's three, not Python's
``splitlines`` set); characters are code points. Pure functions, no I/O.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from acp_client.models import Location, TextEdit

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class EditError(ValueError):
    """Edits that overlap, or ranges that end before they start."""


def lsp_lines(text: str) -> list[str]:
    """``text`` cut into lines, each with its own line break (the last may have none)."""
    return _LINE.findall(text)


@dataclass(frozen=True)
class LineRange:
    """Lines ``start`` (inclusive) to ``end`` (exclusive) of the new content that a
    change produced; ``start == end`` marks lines removed just before ``start``."""

    start: int
    end: int


def _end_of(lines: Sequence[str]) -> tuple[int, int]:
    if not lines:
        return 0, 0
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return len(lines), 0
    return len(lines) - 1, len(last)


def _position(lines: Sequence[str], index: int) -> tuple[int, int]:
    """Where line ``index`` starts; the end of the text when past the last line."""
    return (index, 0) if index < len(lines) else _end_of(lines)


def compute_edits(path: str, old: str, new: str) -> tuple[tuple[TextEdit, ...], list[LineRange]]:
    """Line-granular edits turning ``old`` into ``new`` (ranges on ``old``, in
    order, non-overlapping), and the new content's lines they produced."""
    old_lines, new_lines = lsp_lines(old), lsp_lines(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    edits: list[TextEdit] = []
    produced: list[LineRange] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        (line, character), (end_line, end_character) = (
            _position(old_lines, i1),
            _position(old_lines, i2),
        )
        location = Location(
            path=path,
            line=line,
            character=character,
            end_line=end_line,
            end_character=end_character,
        )
        edits.append(TextEdit(location=location, new_text="".join(new_lines[j1:j2])))
        produced.append(LineRange(j1, j2))
    return tuple(edits), produced


def _offset(starts: Sequence[int], lines: Sequence[str], line: int, character: int) -> int:
    if line >= len(lines):
        return starts[-1]
    content = lines[line].rstrip("\r\n")
    return starts[line] + min(character, len(content))


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with ``edits`` applied (ranges on ``text``; they must not overlap).

    Positions past a line's end clamp to it, past the last line to the end
    of the text, as LSP clients do.
    """
    lines = lsp_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int, str]] = []
    for edit in edits:
        loc = edit.location
        start = _offset(starts, lines, loc.line, loc.character)
        end_line = loc.line if loc.end_line is None else loc.end_line
        end_character = loc.character if loc.end_character is None else loc.end_character
        end = _offset(starts, lines, end_line, end_character)
        if end < start:
            raise EditError(f"{loc.path}:{loc.line + 1}: the edit's range ends before it starts")
        spans.append((start, end, edit.new_text))
    spans.sort(key=lambda span: (span[0], span[1]))
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        if start < end:
            raise EditError("edits overlap")
    pieces: list[str] = []
    cursor = 0
    for start, end, new_text in spans:
        pieces += [text[cursor:start], new_text]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def overlaps(a: Sequence[TextEdit], b: Sequence[TextEdit]) -> bool:
    """Whether any edit of ``a`` overlaps one of ``b`` in the same file (an
    insertion at the very start or end of another's range counts too)."""

    def key(edit: TextEdit) -> tuple[str, tuple[int, int], tuple[int, int]]:
        loc = edit.location
        end = (
            loc.line if loc.end_line is None else loc.end_line,
            loc.character if loc.end_character is None else loc.end_character,
        )
        return loc.path, (loc.line, loc.character), end

    for path_a, start_a, end_a in map(key, a):
        for path_b, start_b, end_b in map(key, b):
            if path_a == path_b and start_a <= end_b and start_b <= end_a:
                return True
    return False
