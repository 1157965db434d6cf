"""Column arithmetic: whatever unit a tool counts in, to Unicode code points.

Tools count columns in UTF-8 bytes, UTF-16 code units or code points; the
contract speaks code points. Converting needs the line's real text, so it
happens here, on the file's bytes as they are on disk.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from acp_backend.validation.config import ColumnUnit

# LSP's line terminators (str.splitlines would also split on \f, \v, U+2028...).
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


class SourceText:
    """A file's lines, split the way an editor splits them."""

    def __init__(self, data: bytes) -> None:
        self._breaks: list[int] | None  # each break's length; None: all are "\n"
        if b"\r" in data:
            self._raw_lines = _LINE_BREAK.split(data)
            self._breaks = [len(found) for found in _LINE_BREAK.findall(data)]
        else:  # the usual file: one C-level split, every break one byte
            self._raw_lines = data.split(b"\n")
            self._breaks = None
        self._decoded: dict[int, str] = {}

    def line_count(self) -> int:
        return len(self._raw_lines)

    def line(self, index: int) -> str | None:
        """Line ``index`` (0-based) decoded (invalid UTF-8 replaced), or None past the end."""
        if not 0 <= index < len(self._raw_lines):
            return None
        text = self._decoded.get(index)
        if text is None:
            text = self._decoded[index] = self._raw_lines[index].decode("utf-8", "replace")
        return text

    def to_code_points(self, line: int, column: int, unit: ColumnUnit) -> int:
        """``column`` (0-based, counted in ``unit``) on ``line`` as a code-point offset.

        A column inside a character (half a surrogate pair, the middle of a
        UTF-8 sequence) rounds down to that character's start; one past the
        line's end means the end. A line the file does not have keeps the
        number as reported: there is no text to convert with.
        """
        text = self.line(line)
        if text is None:
            return column
        if unit is ColumnUnit.CODE_POINTS:
            return min(column, len(text))
        if unit is ColumnUnit.DISPLAY:
            return _cells_to_code_points(text, column)
        if unit is ColumnUnit.BYTES:
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            # Not final: an incomplete trailing sequence stays buffered, i.e. rounds down.
            return len(decoder.decode(self._raw_lines[line][:column], final=False))
        return _utf16_to_code_points(text, column)

    def at_offset(self, offset: int, unit: ColumnUnit) -> tuple[int, int]:
        """The (line, code-point column) of an offset into the whole file,
        counted in ``unit`` (SARIF ``byteOffset``: bytes; ``charOffset``: the run's unit)."""
        for line, raw in enumerate(self._raw_lines):
            size = len(raw) if unit is ColumnUnit.BYTES else _length(self.line(line) or "", unit)
            if offset <= size:
                return line, self.to_code_points(line, offset, unit)
            # Line breaks are ASCII: the same length in every unit.
            offset -= size + self._break_after(line)
        last = len(self._raw_lines) - 1
        return last, self.line_length(last)

    def _break_after(self, line: int) -> int:
        """The length of the break ending ``line`` (0 after the last line)."""
        if line >= len(self._raw_lines) - 1:
            return 0
        return 1 if self._breaks is None else self._breaks[line]

    def line_length(self, line: int) -> int:
        return len(self.line(line) or "")


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
