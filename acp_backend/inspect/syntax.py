"""Parse trees of inspected files (tree-sitter), cached per file content.

One tree is kept per file, the latest one parsed, while the sources of
all kept trees add up to ``TREE_BUDGET`` bytes. When a file's content
changes, its new tree is parsed *incrementally* from the kept one: the
edit between the two texts (their common prefix and suffix) is applied to a
copy of the old tree, and tree-sitter re-uses every subtree the edit did
not touch. Measured by ``bench/bench_hover.py`` on this project's 2-core
machine (shared, load 4-6), 10,000-line files, one line inserted mid-file,
p50 from scratch / incrementally: Python 30 / 22 ms, JavaScript 18 / 3.6,
TypeScript 40 / 2.8, Go 29 / 1.2, Rust 27 / 6.3, Java 34 / 11, C 16 / 0.7,
Ruby 31 / 1.0, Bash 20 / 6.3; from the cache 0.01 ms. Incremental wins in
every language, so it is the only path for a whole file. A hover in a long
file with no tree kept parses only an excerpt first (``parse_excerpt``,
ADR 0030): the block around the line, ~1 ms.

A tree costs ~40-65 bytes per byte of source, held by tree-sitter outside
the garbage collector (the ``ast`` trees ADR 0010 measured cost ~85 bytes
per code point *and* slowed every collection). Texts are parsed as UTF-8;
a lone ``\\r`` (the contract's third line break) becomes ``\\n`` first, one
byte for one, so tree-sitter's rows are the contract's lines and byte
offsets do not move.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache, cached_property
from typing import NamedTuple

from tree_sitter import Language as Grammar
from tree_sitter import Parser, Point, Tree

from acp_backend.inspect.excerpt import excerpt_ranges, parse_ranges
from acp_backend.inspect.languages import Language
from acp_client.text import LineIndex

TREE_BUDGET = 1_000_000
"""Bytes of source whose trees stay cached (~40-65 MB of trees at most)."""
RETIRED_MAX = 8
"""Trees pushed out of the cache kept until ``Trees.free_retired``."""
_CHUNK = 4096
_LONE_CR = re.compile(rb"\r(?!\n)")


@cache
def grammar(name: str) -> Grammar:
    """The grammar ``name``, loaded on first use (the pack costs ~20 ms to
    import, which the backend's start-up need not pay)."""
    from tree_sitter_language_pack import get_language

    return get_language(name)  # type: ignore[arg-type]


def encoded(text: str) -> bytes:
    data = text.encode("utf-8", "surrogatepass")
    return _LONE_CR.sub(b"\n", data) if b"\r" in data else data


@dataclass
class Parsed:
    """A text, its language and its tree."""

    language: Language
    data: bytes
    tree: Tree
    incremental: bool = False  # parsed from an earlier tree of the same file
    block: tuple[int, int] | None = None
    """An excerpt's (``excerpt``): the rows of the one block parsed whole,
    the last one excluded; None for a whole file."""

    @cached_property
    def _lines(self) -> LineIndex[bytes]:
        return LineIndex(self.data, b"\n")

    def line_start(self, row: int) -> int:
        """Byte offset of line ``row`` (the end of the text past the last)."""
        return self._lines.start(row)

    @property
    def lines(self) -> int:
        return len(self._lines)

    def line(self, row: int) -> bytes:
        """Line ``row``'s bytes, without its break."""
        return self._lines.line(row).removesuffix(b"\r")

    def code_points(self, point: Point) -> int:
        """A tree-sitter column (bytes into the line) in code points."""
        start = self.line_start(point.row)
        return len(self.data[start : start + point.column].decode("utf-8", "ignore"))

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")


class Trees:
    """The latest tree per file key, the most recent files first, within
    ``TREE_BUDGET`` bytes of source. Safe to call from worker threads.

    A tree pushed out (by another file, or by its own file's new version) is
    not freed in the parse that pushed it: freeing a 10,000-line file's tree
    took 4.5-7.5 ms, a tenth of a cold hover. It is kept as retired until
    ``free_retired`` (the inspect service calls it once its answer is out),
    at most ``RETIRED_MAX`` of them."""

    def __init__(self, budget: int | None = None) -> None:
        self._budget = budget
        self._held: OrderedDict[object, tuple[str, Parsed]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._retired: list[Parsed] = []

    @property
    def retired(self) -> int:
        return len(self._retired)

    def free_retired(self) -> None:
        with self._lock:
            retired, self._retired = self._retired, []
        del retired  # the trees go here, with no lock held

    def cached(self, key: object, sha256: str, language: Language) -> Parsed | None:
        """The kept tree of exactly this text, if there is one."""
        with self._lock:
            held = self._held.get(key)
        return _same(held, sha256, language)

    def parse(self, key: object, sha256: str, language: Language, text: str) -> Parsed:
        with self._lock:
            held = self._held.get(key)
            if held is not None:
                self._held.move_to_end(key)
        same = _same(held, sha256, language)
        if same is not None:
            return same
        data = encoded(text)
        parser = Parser(grammar(language.grammar))
        earlier = held[1] if held is not None and held[1].language == language else None
        if earlier is None:
            parsed = Parsed(language, data, parser.parse(data))
        else:
            tree = earlier.tree.copy()
            edit = edit_between(earlier.data, data)
            tree.edit(
                start_byte=edit.start_byte,
                old_end_byte=edit.old_end_byte,
                new_end_byte=edit.new_end_byte,
                start_point=edit.start_point,
                old_end_point=edit.old_end_point,
                new_end_point=edit.new_end_point,
            )
            parsed = Parsed(language, data, parser.parse(data, tree), incremental=True)
        self._keep(key, sha256, parsed)
        return parsed

    def _keep(self, key: object, sha256: str, parsed: Parsed) -> None:
        budget = TREE_BUDGET if self._budget is None else self._budget
        freed: list[Parsed] = []
        with self._lock:
            earlier = self._held.pop(key, None)
            if earlier is not None:
                self._bytes -= len(earlier[1].data)
                self._retired.append(earlier[1])
            if len(parsed.data) <= budget:
                self._held[key] = (sha256, parsed)
                self._bytes += len(parsed.data)
            while self._bytes > budget:
                _, (_, dropped) = self._held.popitem(last=False)
                self._bytes -= len(dropped.data)
                self._retired.append(dropped)
            if len(self._retired) > RETIRED_MAX:  # nobody frees them: do it here
                freed, self._retired = self._retired[:-RETIRED_MAX], self._retired[-RETIRED_MAX:]
        del freed

    def __len__(self) -> int:
        return len(self._held)


def _same(held: tuple[str, Parsed] | None, sha256: str, language: Language) -> Parsed | None:
    """A kept tree when it is of this very text, in this language."""
    if held is not None and held[0] == sha256 and held[1].language == language:
        return held[1]
    return None


def parse_excerpt(language: Language, text: str, row: int) -> Parsed | None:
    """Only what line ``row`` needs of ``text`` parsed (``excerpt``), never
    kept: None when no excerpt fits or it does not parse."""
    data = encoded(text)
    start = LineIndex(data, b"\n").start(row)
    found = excerpt_ranges(data, start, language.spans, language.heredocs)
    if found is None:
        return None
    ranges, start, end = found
    tree = parse_ranges(Parser(grammar(language.grammar)), data, ranges)
    if tree is None:
        return None
    past = data.count(b"\n", 0, end) + (end == len(data) and not data.endswith(b"\n"))
    return Parsed(language, data, tree, block=(data.count(b"\n", 0, start), past))


class Edit(NamedTuple):
    """What ``Tree.edit`` takes."""

    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: Point
    old_end_point: Point
    new_end_point: Point


def edit_between(old: bytes, new: bytes) -> Edit:
    """The one edit that turns ``old`` into ``new`` (their common prefix and
    suffix kept)."""
    start = _common_prefix(old, new)
    limit = min(len(old), len(new)) - start
    suffix = _common_suffix(old, new, limit)
    old_end, new_end = len(old) - suffix, len(new) - suffix
    return Edit(
        start,
        old_end,
        new_end,
        _point(old, start),
        _point(old, old_end),
        _point(new, new_end),
    )


def _point(data: bytes, offset: int) -> Point:
    row = data.count(b"\n", 0, offset)
    return Point(row, offset - (data.rfind(b"\n", 0, offset) + 1))


def _common_prefix(a: bytes, b: bytes) -> int:
    """Chunk by chunk, then halving the chunk that differs (memcmp speed throughout)."""
    limit = min(len(a), len(b))
    at = 0
    while at < limit and a[at : at + _CHUNK] == b[at : at + _CHUNK]:
        at += _CHUNK
    if at >= limit:
        return limit
    low, high = at, min(at + _CHUNK, limit)  # a[:low] == b[:low]; they differ before high
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low + (a[low] == b[low])


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """The common suffix's length, at most ``limit`` (the prefix stays out of it)."""
    la, lb = len(a), len(b)

    def same(start: int, end: int) -> bool:  # the suffixes' bytes start..end from the end
        return a[la - end : la - start] == b[lb - end : lb - start]

    size = 0
    while size < limit and same(size, min(size + _CHUNK, limit)):
        size = min(size + _CHUNK, limit)
    if size >= limit:
        return limit
    low, high = size, min(size + _CHUNK, limit)
    while high - low > 1:
        middle = (low + high) // 2
        if same(low, middle):
            low = middle
        else:
            high = middle
    return low + same(low, low + 1)
