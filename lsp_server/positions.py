"""Columns: the contract counts Unicode code points, LSP counts what was negotiated.

LSP's default unit is UTF-16 code units; a client may offer UTF-8 (bytes) or
UTF-32 (code points). Converting needs the line's text as the editor sees it
now: the open buffer when there is one, else the file on disk.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence

from lsprotocol.types import PositionEncodingKind

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

Lines = Sequence[str]


def split_lines(text: str) -> list[str]:
    """Lines the way LSP counts them: only ``\\n``, ``\\r\\n`` and ``\\r`` break."""
    return _LINE_BREAK.split(text)


def column(line: str, code_points: int, encoding: PositionEncodingKind | str) -> int:
    """``code_points`` into ``line`` expressed in ``encoding`` units, clamped to the line."""
    prefix = line[:code_points]
    if encoding == PositionEncodingKind.Utf32 or prefix.isascii():
        return len(prefix)
    if encoding == PositionEncodingKind.Utf8:
        return len(prefix.encode("utf-8", "surrogatepass"))
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


def code_points(line: str, units: int, encoding: PositionEncodingKind | str) -> int:
    """The inverse of ``column``: an editor's ``units`` into ``line`` as code
    points, clamped to the line. A position inside a character (between a
    surrogate pair's halves, inside a UTF-8 sequence) means that character."""
    if encoding == PositionEncodingKind.Utf32 or line.isascii():
        return min(units, len(line))
    wide = encoding == PositionEncodingKind.Utf8
    counted = 0
    for index, char in enumerate(line):
        point = ord(char)
        if wide:
            counted += 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4
        else:
            counted += 2 if point > 0xFFFF else 1
        if counted > units:
            return index
    return len(line)


def convert(
    lines: Lines | None, line: int, code_points: int, encoding: PositionEncodingKind | str
) -> int:
    """Column for ``(line, code_points)``; unchanged when the line is unknown
    (no text, or the file has since shrunk), which is the best guess left."""
    if lines is None or line >= len(lines):
        return code_points
    return column(lines[line], code_points, encoding)


class DiskText:
    """Lines of files on disk, cached by (mtime, size) so that a burst of
    findings in one unopened file reads it once."""

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._cache: OrderedDict[str, tuple[tuple[int, int], list[str]]] = OrderedDict()

    def lines(self, path: str) -> list[str] | None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            self._cache.move_to_end(path)
            return cached[1]
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                lines = split_lines(handle.read())
        except OSError:
            return None
        self._cache[path] = (stamp, lines)
        if len(self._cache) > self._capacity:
            self._cache.popitem(last=False)
        return lines


TextLookup = Callable[[str], Lines | None]
"""Lines of a document, given its URI (None when neither open nor readable)."""
