"""The part of a long file one line needs: its block and the headers around it.

A cold hover on a 10,000-line file parsed the whole file (30-100 ms on a
2-core machine, by language) to name the one definition around a line. An
excerpt is found by indentation alone, in any language: the line's chain of
enclosing openers (each the nearest line above with less indentation), the
outermost of them whose block fits ``BLOCK_BUDGET`` bytes taken whole (with
the comments, decorators and attributes right above it), and each outer
opener's header and closing line (``class Big {`` ... ``}``). tree-sitter
parses only those ranges (``included_ranges``), in the file's own
coordinates, so rows and bytes are the file's.

An excerpt can be wrong where indentation lies (a column-0 line inside a
string, commented-out code, a preprocessor line). It is used only when its
tree has no syntax error and the definition found lies inside the block
taken whole; otherwise the caller parses the whole file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from tree_sitter import Parser, Point, Range, Tree

BLOCK_BUDGET = 32_000
"""Bytes of the block taken whole (a parse of ~10 ms at worst here)."""
ATTACHED_LINES = 50
"""Lines of comments, decorators and attributes looked at above a block."""
HEADER_LINES = 20
"""Lines of an outer opener's header (``public class Big`` ... ``{``)."""

Spans = tuple[tuple[bytes, bytes], ...]

_BLANK = b" \t"
_CLOSER = re.compile(rb"(?:[})\]]|(?:end|fi|done|esac)\b)")
_OPENS = re.compile(rb"(?:[{(\[:]|\b(?:do|then|else))\s*$")
_COMMENT = re.compile(rb"[ \t]*(?:#|//|/\*|\*|--)")
_HEREDOC = re.compile(rb"<<[-~]?['\"]?[A-Za-z_]")


@cache
def _line_indented_at_most(indent: int) -> re.Pattern[bytes]:
    """A line break before a line with content after at most ``indent``
    blanks (led by the break, not ``^``: a literal the engine scans for)."""
    return re.compile(rb"\n[ \t]{0,%d}[^ \t\r\n]" % indent)


class _Lines:
    """Byte-level lines of a text, found by offset (no line list)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def start(self, offset: int) -> int:
        """The start of the line holding ``offset``."""
        return self.data.rfind(b"\n", 0, offset) + 1

    def end(self, start: int) -> int:
        """The start of the next line (the text's end after the last)."""
        found = self.data.find(b"\n", start)
        return len(self.data) if found < 0 else found + 1

    def text(self, start: int) -> bytes:
        return self.data[start : self.end(start)].rstrip(b"\r\n")

    def indent(self, start: int) -> int | None:
        """Blanks before the line's content (None: a blank line)."""
        line = self.text(start)
        content = line.lstrip(_BLANK)
        return len(line) - len(content) if content else None

    def above(self, start: int) -> Iterator[int]:
        """Line starts above ``start``, nearest first."""
        while start > 0:
            start = self.start(start - 1)
            yield start

    def next_at_most(self, indent: int, after: int, limit: int | None = None) -> int | None:
        """The first line starting at or after ``after`` (before ``limit``) whose
        content begins within ``indent`` blanks."""
        first = self.indent(0)
        if after == 0 and first is not None and first <= indent:
            return 0
        pattern = _line_indented_at_most(indent)
        end = len(self.data) if limit is None else limit
        found = pattern.search(self.data, max(0, after - 1), end)
        return None if found is None else found.start() + 1

    def last_below(self, indent: int, before: int) -> int | None:
        """The nearest line above ``before`` whose content begins within fewer
        than ``indent`` blanks."""
        if indent == 0:
            return None
        pattern = _line_indented_at_most(indent - 1)
        window = 8192
        low = before
        while low > 0:
            low = self.start(max(0, low - window))
            hits = pattern.finditer(self.data, max(0, low - 1), before)
            starts = [hit.start() for hit in hits]
            if starts:
                return starts[-1] + 1
            window *= 4
        first = self.indent(0)
        return 0 if before > 0 and first is not None and first < indent else None


def _is_closer(lines: _Lines, start: int) -> bool:
    return _CLOSER.match(lines.text(start).lstrip(_BLANK)) is not None


class _Block:
    """An opener's block: from its attached lines to its closing line."""

    def __init__(self, lines: _Lines, opener: int, indent: int) -> None:
        self.lines, self.opener, self.indent = lines, opener, indent
        self.start = self._attached_start()

    def _attached_start(self) -> int:
        """Above the opener: comments, decorators and attributes with no
        blank line between, at its indentation or deeper (`` * `` inside a
        doc comment)."""
        start = self.opener
        for count, above in enumerate(self.lines.above(self.opener)):
            indent = self.lines.indent(above)
            if count == ATTACHED_LINES or indent is None or indent < self.indent:
                break
            if _is_closer(self.lines, above):
                break
            start = above
        return start

    def bounded(self, headers: list[tuple[int, int]]) -> bool:
        """Nothing right above the block could belong to it: it starts the
        file, or a blank line or an included header is above it."""
        if self.start == 0:
            return True
        above = self.lines.start(self.start - 1)
        return self.lines.indent(above) is None or any(
            start <= above < end for start, end in headers
        )

    def end(self, limit: int) -> int | None:
        """Past the block's last line: the line that comes back to the
        opener's indentation ends it, taken when it closes (``}``, ``end``),
        and continued when it reopens (``} else {``) or is a comment with
        the block's code below it. None when the block goes past ``limit``."""
        lines, after = self.lines, self.lines.end(self.opener)
        while True:
            found = lines.next_at_most(self.indent, after, limit)
            if found is None:
                return None if limit < len(lines.data) else len(lines.data)
            after = lines.end(found)
            if _COMMENT.match(lines.text(found)):
                if self._goes_on(after):
                    continue
                return found
            if lines.indent(found) != self.indent or not _is_closer(lines, found):
                return found
            if _OPENS.search(lines.text(found)) is None:
                return after

    def _goes_on(self, start: int) -> bool:
        """The next line of code from ``start`` is deeper than the opener."""
        lines = self.lines
        while start < len(lines.data):
            indent = lines.indent(start)
            if indent is not None and not _COMMENT.match(lines.text(start)):
                return indent > self.indent
            start = lines.end(start)
        return False


def excerpt_ranges(
    data: bytes, line_start: int, spans: Spans = (), heredocs: bool = False
) -> tuple[list[tuple[int, int]], int, int] | None:
    """Byte ranges to parse for the line starting at ``line_start``, and the
    block taken whole (start, end); None when no block fits, or the one
    that fits may start inside something (``_left_open``)."""
    lines = _Lines(data)
    indent = lines.indent(line_start)
    if indent is None:
        return None
    chain = [_Block(lines, line_start, indent)]
    while (opener := lines.last_below(chain[-1].indent, chain[-1].start)) is not None:
        opener_indent = lines.indent(opener)
        assert opener_indent is not None  # the pattern matched content
        chain.append(_Block(lines, opener, opener_indent))
    for position in range(len(chain) - 1, -1, -1):
        block = chain[position]
        end = block.end(min(len(data), block.start + BLOCK_BUDGET))
        if end is None or end <= line_start:
            continue
        outer = chain[position + 1 :]
        headers = _headers(lines, outer, block)
        if not block.bounded(headers):  # a doc comment may go on above
            return None
        if _left_open(data, block.start, headers, spans, heredocs):
            return None
        ranges = [*headers, (block.start, end), *_closers(lines, outer, end)]
        return _merged(ranges), block.start, end
    return None


def _left_open(
    data: bytes, offset: int, headers: list[tuple[int, int]], spans: Spans, heredocs: bool
) -> bool:
    """Whether something may be open at ``offset``: a brace the headers do
    not account for (a C++ namespace whose body is not indented), a string
    or comment of ``spans`` (an odd count of a mark that both opens and
    closes), a heredoc. Marks inside strings and comments count too, so
    this errs towards parsing the whole file."""
    opened = data.count(b"{", 0, offset) - data.count(b"}", 0, offset)
    by_headers = sum(data.count(b"{", a, b) - data.count(b"}", a, b) for a, b in headers)
    if opened != by_headers:
        return True
    for opening, closing in spans:
        count = data.count(opening, 0, offset)
        if (count % 2) if opening == closing else count != data.count(closing, 0, offset):
            return True
    return heredocs and _HEREDOC.search(data, 0, offset) is not None


def _headers(lines: _Lines, outer: list[_Block], inner: _Block) -> list[tuple[int, int]]:
    """Each outer opener's header: its lines down to its first member's indentation."""
    headers = []
    for block, child in zip(outer, [inner, *outer], strict=False):
        end = lines.end(block.opener)
        for _ in range(HEADER_LINES):
            if end >= child.start or lines.indent(end) in (child.indent, None):
                break
            end = lines.end(end)
        headers.append((block.opener, min(end, child.start)))
    return headers


def _closers(lines: _Lines, outer: list[_Block], after: int) -> list[tuple[int, int]]:
    """Each outer opener's closing line (``}``, ``end``), innermost first."""
    closers = []
    for block in outer:
        found = lines.next_at_most(block.indent, after)
        if found is None or lines.indent(found) != block.indent or not _is_closer(lines, found):
            continue
        after = lines.end(found)
        closers.append((found, after))
    return closers


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        elif end > start:
            merged.append((start, end))
    return merged


def parse_ranges(parser: Parser, data: bytes, ranges: list[tuple[int, int]]) -> Tree | None:
    """``data`` parsed in ``ranges`` only; None when the excerpt does not parse."""
    parser.included_ranges = [
        Range(_point(data, start), _point(data, end), start, end) for start, end in ranges
    ]
    tree = parser.parse(data)
    return None if tree.root_node.has_error else tree


def _point(data: bytes, offset: int) -> Point:
    row = data.count(b"\n", 0, offset)
    return Point(row, offset - (data.rfind(b"\n", 0, offset) + 1))
