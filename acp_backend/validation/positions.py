"""Column arithmetic: whatever unit a tool counts in, to Unicode code points.

Tools count columns in UTF-8 bytes, UTF-16 code units or code points; the
contract speaks code points. Converting needs the line's real text, so it
happens here, on the file's bytes as they are on disk.

A UTF-8 BOM is not text: line 0 starts after it, as in an editor and in the
contract (``acp_client.text``). Most tools count columns without it too
(measured: ruff, bandit, mypy ``--no-native-parser``, flake8, ripgrep,
eslint, tsc, yamllint, markdownlint, gcc report a BOM file's first line as
the same file's without one); those that count it (semgrep and clang: its 3
bytes; pyright and shellcheck: one character) say so with
``bom_counted`` (a validation's ``columns_count_bom``).
"""

from __future__ import annotations

import codecs
import unicodedata
from array import array
from itertools import accumulate, chain, repeat
from operator import add

from acp_backend.validation.config import ColumnUnit
from acp_client.text import BOM_BYTES, LINE_BREAK_BYTES

_LONG_LINE = 1024  # bytes: a line this long is decoded once, whatever the order it is read in


class SourceText:
    """A file's lines, split the way an editor splits them (LSP's line
    breaks; a leading BOM in no line).

    Held as the file's bytes and where each line starts, not as a ``bytes``
    per line: the fork server keeps one for each file parses read
    (``file_facts``), and the children forked from it write to every object
    they touch (reference counts), copying its page. A split file was ~16
    objects, ~2 KB of heap; this is three. Decoded, the last line read is
    kept (findings mostly come in line order), and any long one (a minified
    file's single line, met by findings in any order)."""

    __slots__ = ("_breaks", "_data", "_last", "_long", "_starts")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._breaks: list[int] | None  # each break's length; None: all are "\n"
        if b"\r" in data:
            lines = LINE_BREAK_BYTES.split(data)
            self._breaks = [len(found) for found in LINE_BREAK_BYTES.findall(data)]
        else:  # the usual file: one C-level split, every break one byte
            lines = data.split(b"\n")
            self._breaks = None
        breaks = repeat(1, len(lines) - 1) if self._breaks is None else self._breaks
        # Where each line starts, then where the file ends.
        steps = map(add, map(len, lines), chain(breaks, (0,)))
        self._starts = array("Q", accumulate(steps, initial=0))
        if data.startswith(BOM_BYTES):
            self._starts[0] = len(BOM_BYTES)  # line 0 starts after the BOM
        self._last: tuple[int, str] | None = None
        self._long: dict[int, str] | None = None  # decoded lines of over _LONG_LINE bytes

    def line_count(self) -> int:
        return len(self._starts) - 1

    def _span(self, index: int) -> tuple[int, int]:
        """Where line ``index`` (in range) starts and ends, its break left out."""
        return self._starts[index], self._starts[index + 1] - self._break_after(index)

    def _raw(self, index: int) -> bytes:
        """Line ``index`` (in range) without its break."""
        start, end = self._span(index)
        return self._data[start:end]

    def line(self, index: int) -> str | None:
        """Line ``index`` (0-based) decoded (invalid UTF-8 replaced), or None past the end."""
        if not 0 <= index < len(self._starts) - 1:
            return None
        last = self._last
        if last is not None and last[0] == index:
            return last[1]
        if self._long is not None and (text := self._long.get(index)) is not None:
            return text
        raw = self._raw(index)
        text = raw.decode("utf-8", "replace")
        if len(raw) > _LONG_LINE:
            if self._long is None:
                self._long = {}
            self._long[index] = text
        self._last = (index, text)
        return text

    @property
    def has_bom(self) -> bool:
        """Whether the file starts with a UTF-8 BOM (which no line holds)."""
        return bool(self._starts[0])

    def to_code_points(
        self, line: int, column: int, unit: ColumnUnit, bom_counted: bool = False
    ) -> int:
        """``column`` (0-based, counted in ``unit``) on ``line`` as a code-point offset.

        A column inside a character (half a surrogate pair, the middle of a
        UTF-8 sequence) rounds down to that character's start; one past the
        line's end means the end. A line the file does not have keeps the
        number as reported: there is no text to convert with. ``bom_counted``:
        the tool counted the file's BOM in line 0's columns.
        """
        text = self.line(line)
        if text is None:
            return column
        if bom_counted and line == 0 and self.has_bom:
            column = max(column - _bom_length(unit), 0)
        if unit is ColumnUnit.CODE_POINTS:
            return min(column, len(text))
        if unit is ColumnUnit.DISPLAY:
            return _cells_to_code_points(text, column)
        if unit is ColumnUnit.BYTES:
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            # Not final: an incomplete trailing sequence stays buffered, i.e. rounds down.
            return len(decoder.decode(self._raw(line)[:column], final=False))
        return _utf16_to_code_points(text, column)

    def at_offset(
        self, offset: int, unit: ColumnUnit, bom_counted: bool = False
    ) -> tuple[int, int]:
        """The (line, code-point column) of an offset into the whole file,
        counted in ``unit`` (SARIF ``byteOffset``: bytes; ``charOffset``: the run's unit).

        A byte offset counts the file's bytes, a BOM's included (SARIF's binary
        region covers the same bytes as the text region); a character offset,
        like a column, counts the text, which starts after it (unless
        ``bom_counted``)."""
        if self.has_bom and (bom_counted or unit is ColumnUnit.BYTES):
            offset = max(offset - _bom_length(unit), 0)
        for line in range(self.line_count()):
            if unit is ColumnUnit.BYTES:
                start, end = self._span(line)
                size = end - start
            else:
                size = _length(self.line(line) or "", unit)
            if offset <= size:
                return line, self.to_code_points(line, offset, unit)
            # Line breaks are ASCII: the same length in every unit.
            offset -= size + self._break_after(line)
        last = self.line_count() - 1
        return last, self.line_length(last)

    def _break_after(self, line: int) -> int:
        """The length of the break ending ``line`` (0 after the last line)."""
        if line >= self.line_count() - 1:
            return 0
        return 1 if self._breaks is None else self._breaks[line]

    def line_length(self, line: int) -> int:
        return len(self.line(line) or "")


def _bom_length(unit: ColumnUnit) -> int:
    """The length of a BOM in ``unit``: 3 bytes, else one (character, UTF-16 unit, cell)."""
    return len(BOM_BYTES) if unit is ColumnUnit.BYTES else 1


def _length(text: str, unit: ColumnUnit) -> int:
    if unit is ColumnUnit.UTF16:
        return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)
    return len(text)


def _cell_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _cells_to_code_points(text: str, cells: int, tab_stop: int = 8) -> int:
    """A display column (terminal cells, tabs to the next multiple of
    ``tab_stop``, wide characters two) as a code-point offset; a column
    inside a tab or a wide character means that character."""
    counted = 0
    for index, char in enumerate(text):
        counted += tab_stop - counted % tab_stop if char == "\t" else _cell_width(char)
        if counted > cells:
            return index
    return len(text)


def _utf16_to_code_points(text: str, units: int) -> int:
    counted = 0
    for index, char in enumerate(text):
        counted += 2 if ord(char) > 0xFFFF else 1
        if counted > units:
            return index
    return len(text)
