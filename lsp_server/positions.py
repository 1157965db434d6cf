"""Columns: the contract counts Unicode code points, LSP counts what was negotiated.

LSP's default unit is UTF-16 code units; a client may offer UTF-8 (bytes) or
UTF-32 (code points). Converting needs the line's text as the editor sees it
now: the open buffer when there is one, else the file on disk.
"""

from __future__ import annotations

import os
import sys
from collections import OrderedDict
from collections.abc import Sequence

from lsprotocol.types import PositionEncodingKind

from acp_client.text import decoded, split_lines

Lines = Sequence[str]

# Plain strings: comparing with them is cheaper than an enum member lookup,
# and a conversion runs twice per diagnostic.
_UTF8 = PositionEncodingKind.Utf8.value
_UTF32 = PositionEncodingKind.Utf32.value


def column(line: str, code_points: int, encoding: PositionEncodingKind | str) -> int:
    """``code_points`` (>= 0) into ``line`` expressed in ``encoding`` units,
    clamped to the line."""
    return columns(line, code_points, code_points, encoding)[0]


def columns(
    line: str, start: int, end: int, encoding: PositionEncodingKind | str
) -> tuple[int, int]:
    """``column`` of two points on one line (the one rule for both): the
    line's prefix is encoded once, then only what lies between them; nearly
    every diagnostic's range is on one line. ``isascii`` of a whole line
    costs nothing (CPython flags ASCII strings), so most lines skip the
    slices and the encoding."""
    if line.isascii() or encoding == _UTF32:
        size = len(line)
        return min(start, size), min(end, size)
    codec, unit = ("utf-8", 1) if encoding == _UTF8 else ("utf-16-le", 2)
    first = len(line[:start].encode(codec, "surrogatepass")) // unit
    if end < start:
        return first, len(line[:end].encode(codec, "surrogatepass")) // unit
    return first, first + len(line[start:end].encode(codec, "surrogatepass")) // unit


def code_points(line: str, units: int, encoding: PositionEncodingKind | str) -> int:
    """The inverse of ``column``: an editor's ``units`` into ``line`` as code
    points, clamped to the line. A position inside a character (between a
    surrogate pair's halves, inside a UTF-8 sequence) means that character."""
    if encoding == _UTF32 or line.isascii():
        return min(units, len(line))
    wide = encoding == _UTF8
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


def line_at(lines: Lines | None, line: int) -> str | None:
    """The text of ``line``; None when it is unknown (no text, or the file
    has since shrunk): a column there stays in code points, the best guess left."""
    return None if lines is None or line >= len(lines) else lines[line]


_LINE_HEAD = 64
"""About the heap of a ``str`` beyond its characters (``sys.getsizeof`` of
each line instead cost more than reading a small file)."""


class DiskText:
    """Lines of files on disk, cached by (mtime, size) so that a file sent
    again soon (a related place of other files' findings, another
    validation's result) is read once.

    Bounded by the heap the lines take, not by a count of files: 256 large
    files could hold gigabytes. Kept small on purpose: a cache holding a
    burst's files (8 MiB held a 1,000-file burst's) cost ~170 bytes of heap
    per finding held (issue 11 allows 300 in all) to save ~6 us a file when
    the same files are sent again, which held runs avoid anyway."""

    def __init__(self, capacity: int = 2**19) -> None:
        self._capacity = capacity  # bytes of heap, about
        self._size = 0
        self._cache: OrderedDict[str, tuple[tuple[int, int], list[str], int]] = OrderedDict()

    def lines(self, path: str) -> list[str] | None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.pop(path, None)
        if cached is not None:
            if cached[0] == stamp:
                self._cache[path] = cached  # the most recently used now
                return cached[1]
            self._size -= cached[2]
        try:
            text = decoded(_read(path, stat.st_size))
        except OSError:
            return None
        lines = split_lines(text)
        cost = sys.getsizeof(text) + sys.getsizeof(lines) + _LINE_HEAD * len(lines)
        if cost <= self._capacity:  # one file larger than the whole cache is not kept
            self._cache[path] = (stamp, lines, cost)
            self._size += cost
            while self._size > self._capacity:
                self._size -= self._cache.popitem(last=False)[1][2]
        return lines


def _read(path: str, size: int) -> bytes:
    """The file's bytes, in one ``read`` while it has the size ``stat``
    gave: a burst reads 1,000s of files, and a buffered ``open().read()``
    took half as long again (12 against 8 ms for 1,000 small files)."""
    chunks = []
    descriptor = os.open(path, os.O_RDONLY)
    try:
        while chunk := os.read(descriptor, size + 1):
            chunks.append(chunk)
    finally:
        os.close(descriptor)
    return b"".join(chunks)
