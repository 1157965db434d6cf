"""Text as the contract sees it: LSP lines, code-point columns, edits.

The rules are ``acp_client.text``'s: lines end at ``\\r\\n``, ``\\r`` or
``\\n`` (LSP's three, not Python's ``splitlines`` set); characters are code
points; a range with an end line but no end character runs to the end of
that line (``span``); positions never count a UTF-8 BOM (line 0 starts
after it, as in an editor). Pure functions, no I/O.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from acp_client.models import Location, TextEdit
from acp_client.text import BOM, END_OF_LINE, span

# acp_client.text.LINE_BREAK's breaks, each kept with the line it ends.
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
    order, non-overlapping), and the new content's lines they produced.

    Both texts are taken without a leading BOM: the edits are positioned as
    an editor holds the file (its buffer has no BOM), and never carry one.
    A BOM that only one side has is no edit at all: an LSP edit cannot add
    or remove it (it is outside every position), so only the change's whole
    new content (``FileChange.new_text``) says so."""
    old_lines, new_lines = lsp_lines(old.removeprefix(BOM)), lsp_lines(new.removeprefix(BOM))
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

    Ranges are read as ``acp_client.text.span`` reads them (an end line
    without an end character: to that line's end), on ``text`` without its
    BOM, which is kept in front of the result. Positions past a line's end
    clamp to it, past the last line to the end of the text, as LSP clients do.
    """
    if text.startswith(BOM):
        return BOM + apply_edits(text.removeprefix(BOM), edits)
    lines = lsp_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int, str]] = []
    for edit in edits:
        loc = edit.location
        if _reversed(loc):  # span would read it as a point: refuse it as malformed
            raise EditError(f"{loc.path}:{loc.line + 1}: the edit's range ends before it starts")
        (start_line, character), (end_line, end_character) = span(loc)
        start = _offset(starts, lines, start_line, character)
        end = _offset(starts, lines, end_line, end_character)
        spans.append((start, end, edit.new_text))
    spans.sort(key=lambda item: (item[0], item[1]))
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


def _reversed(location: Location) -> bool:
    """Whether a range ends before it starts, as given."""
    if location.end_line is None:
        return False
    end_character = END_OF_LINE if location.end_character is None else location.end_character
    return (location.end_line, end_character) < (location.line, location.character)
