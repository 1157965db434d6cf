"""Text as the contract counts it, decided once for every side.

- **Lines** end at ``\\r\\n``, ``\\r`` or ``\\n`` (LSP's three; ``str.splitlines``
  also splits on form feeds, U+2028 and more).
- **The text a tool read** is named by the sha256 of the file's bytes
  (``ValidationResult.file_hashes``, ``FileChange.base_sha256``). An editor's
  buffer is that file when the digests agree, **with or without a UTF-8
  BOM** in front: editors drop the BOM from the text they hold (VS Code,
  Neovim with ``'bomb'``) and write it back on save. Line ends are compared
  as they are: a CRLF file is a CRLF buffer.
- **Positions never count a BOM**: line 0 starts after it, as in an editor
  (``decoded`` reads a file that way).
- **Two edits overlap** when they are in the same file and their ranges
  meet, touching included: two insertions at one point, or one at the very
  end of another's range, would depend on the order they are applied in.

No pydantic here: the language server loads this before its models (ADR 0016).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from array import array
from collections.abc import Iterable
from itertools import accumulate, repeat
from typing import TYPE_CHECKING, AnyStr, Generic

if TYPE_CHECKING:
    from acp_client.models import Location, TextEdit

_INDEX_BLOCK = 4096
LINE_BREAK = re.compile(r"\r\n|\r|\n")
LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their breaks (one more than breaks)."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)


class LineIndex(Generic[AnyStr]):
    """The lines of a text broken by ``newline`` alone, read one at a time.
    Breaks are counted per ``_INDEX_BLOCK`` at memchr speed; a line is found
    by splitting the one block that holds its start. Every line's start (or
    every line) took ~1 ms of Python for a 10,000-line text, of which a
    hover reads a few lines."""

    def __init__(self, text: AnyStr, newline: AnyStr) -> None:
        self.text: AnyStr = text
        self._newline: AnyStr = newline
        size, block = len(text), _INDEX_BLOCK
        counts = map(
            text.count, repeat(newline), range(0, size, block), range(block, size + block, block)
        )
        self._breaks = array("q", accumulate(counts, initial=0))  # before each block

    def __len__(self) -> int:
        """How many lines (one more than breaks)."""
        return self._breaks[-1] + 1

    def start(self, row: int) -> int:
        """Where line ``row`` starts (the end of the text past the last line)."""
        breaks = self._breaks
        if row <= 0:
            return 0
        if row > breaks[-1]:
            return len(self.text)
        block = bisect.bisect_left(breaks, row) - 1  # the one holding the row-th break
        at = block * _INDEX_BLOCK
        chunk = self.text[at : at + _INDEX_BLOCK]
        return at + len(chunk) - len(chunk.split(self._newline, row - breaks[block])[-1])

    def line(self, row: int) -> AnyStr:
        """Line ``row`` without its break (empty past the last line)."""
        return self.text[self.start(row) : self.start(row + 1)].removesuffix(self._newline)


def decoded(data: bytes) -> str:
    """A file's bytes as an editor shows them: UTF-8 (undecodable bytes
    replaced, so such a file never matches a digest), its BOM dropped."""
    return data.decode("utf-8", "replace").removeprefix(BOM)


def digest(text: str) -> str:
    """sha256 of ``text`` as UTF-8 bytes (lone surrogates kept as they are)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def digests(text: str) -> frozenset[str]:
    """The digests of every file an editor could hold as ``text``: the text
    itself and the text behind a BOM (and, for a text that still starts
    with one, the text without it)."""
    return frozenset(bare_and_behind_bom(text.encode("utf-8", "surrogatepass")))


def bare_and_behind_bom(data: bytes) -> tuple[str, str]:
    """sha256 of ``data`` without a leading BOM, and behind one: ``digests``
    of an encoded text. Hashed from the one encoding (a BOM put in front of
    the ``str`` would copy it, and widen an ASCII text to two bytes a character)."""
    bare = data.removeprefix(BOM_BYTES)
    behind = hashlib.sha256(BOM_BYTES)
    behind.update(bare)
    return hashlib.sha256(bare).hexdigest(), behind.hexdigest()


def holds(text: str, expected: str) -> bool:
    """Whether ``text`` is the file whose bytes hashed to ``expected``."""
    return expected in digests(text)


Point = tuple[int, int]
"""(line, code points)."""


END_OF_LINE = 2**31 - 1
"""The character of an end that names a line but no character: that line's
end (as SARIF reads a region without ``endColumn``), clamped to the text
where there is one."""


def span(location: Location) -> tuple[Point, Point]:
    """A location's start and end: a location without an end line is a
    point; one with an end line but no end character runs to that line's
    end; an end before the start is taken as the start."""
    start = (location.line, location.character)
    if location.end_line is None:
        return start, start
    end_character = END_OF_LINE if location.end_character is None else location.end_character
    return start, max(start, (location.end_line, end_character))


class TakenEdits:
    """Edits taken so far, to ask whether more would overlap any of them.

    Kept per file as the union of their spans, sorted and apart (spans that
    meet are merged), so a question costs a binary search: "Fix all" over a
    file's 1,000 fixes asks a thousand of them per request."""

    def __init__(self) -> None:
        self._starts: dict[str, list[Point]] = {}
        self._ends: dict[str, list[Point]] = {}

    def overlaps(self, edits: Iterable[TextEdit]) -> bool:
        """Whether any of ``edits`` meets an edit taken, touching included."""
        for edit in edits:
            starts = self._starts.get(edit.location.path)
            if not starts:
                continue
            start, end = span(edit.location)
            # The last span starting at or before this end is the only one
            # that can reach back to this start: the ones before it end earlier.
            before = bisect.bisect_right(starts, end) - 1
            if before >= 0 and self._ends[edit.location.path][before] >= start:
                return True
        return False

    def take(self, edits: Iterable[TextEdit]) -> None:
        for edit in edits:
            starts = self._starts.setdefault(edit.location.path, [])
            ends = self._ends.setdefault(edit.location.path, [])
            start, end = span(edit.location)
            first = bisect.bisect_left(ends, start)  # the first span reaching this start
            past = bisect.bisect_right(starts, end)  # past the last starting by this end
            if first < past:
                start, end = min(start, starts[first]), max(end, ends[past - 1])
            starts[first:past] = [start]
            ends[first:past] = [end]
