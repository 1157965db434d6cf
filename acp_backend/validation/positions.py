"""Column arithmetic: whatever unit a tool counts in, to Unicode code points.

Tools count columns in UTF-8 bytes, UTF-16 code units or code points; the
contract speaks code points. Converting needs the line's real text, so it
happens here, on the file's bytes as they are on disk.
"""

from __future__ import annotations

import codecs
import re

from acp_backend.validation.config import ColumnUnit

# LSP's line terminators (str.splitlines would also split on \f, \v, U+2028...).
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


class SourceText:
    """A file's lines, split the way an editor splits them."""

    def __init__(self, data: bytes) -> None:
        self._raw_lines = _LINE_BREAK.split(data)
        self._decoded: dict[int, str] = {}

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
        if unit is ColumnUnit.BYTES:
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            # Not final: an incomplete trailing sequence stays buffered, i.e. rounds down.
            return len(decoder.decode(self._raw_lines[line][:column], final=False))
        return _utf16_to_code_points(text, column)


def _utf16_to_code_points(text: str, units: int) -> int:
    counted = 0
    for index, char in enumerate(text):
        counted += 2 if ord(char) > 0xFFFF else 1
        if counted > units:
            return index
    return len(text)
