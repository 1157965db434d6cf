"""Where the cursor is in an ``acp.toml``, read line by line.

Completion and hover ask this while the user types, so the file is often
not valid TOML (a key without its value, an unclosed string): nothing here
parses the whole file. A table starts at its header (``[[validations]]``,
``[name]``) and runs to the next; within it a line ``key = value`` sets a
key; a value that opens a bracket (a multi-line array, an inline table)
runs until it closes. Pure functions on the document's lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")
_PARTIAL_KEY = re.compile(r"^\s*([A-Za-z0-9_-]*)$")

VALIDATIONS = "validations"


@dataclass(frozen=True, slots=True)
class Place:
    """What the cursor is on.

    ``table`` is the header's name (``validations``), ``array`` whether it is
    an array of tables; ``keys`` the keys its lines set, and where.
    ``side`` is ``key`` (typing a key: ``typed`` so far, from
    ``start``), ``value`` (after ``key =``: ``typed`` so far, ``quoted``
    when inside an opening quote, from ``start``), or ``other``
    (a header, a comment, inside a multi-line value)."""

    table: str | None
    array: bool
    keys: dict[str, int]
    side: str
    key: str | None = None
    typed: str = ""
    start: int = 0
    quoted: bool = False

    @property
    def in_validations(self) -> bool:
        return self.table == VALIDATIONS and self.array


def place(lines: Sequence[str], line: int, character: int) -> Place:
    """The place at ``(line, character)`` (code points)."""
    header, table, array = _table_of(lines, line)
    keys, open_key = _keys(lines, header + 1, line)
    if line >= len(lines):
        return Place(table, array, keys, "key")
    text = lines[line]
    before = text[: min(character, len(text))]
    if open_key is not None or _HEADER.match(text) or before.lstrip().startswith("#"):
        return Place(table, array, keys, "other", open_key)
    setting = _KEY.match(before)
    if setting is None:
        partial = _PARTIAL_KEY.match(before)
        if partial is None:
            return Place(table, array, keys, "other")
        return Place(table, array, keys, "key", typed=partial.group(1), start=partial.start(1))
    value = before[setting.end() :]
    stripped = value.lstrip()
    start = len(before) - len(stripped)
    quoted = stripped[:1] in ('"', "'") and stripped.count(stripped[0]) == 1
    if quoted:
        stripped, start = stripped[1:], start + 1
    elif stripped and not re.fullmatch(r"[A-Za-z0-9_-]*", stripped):
        return Place(table, array, keys, "other", setting.group(1))  # past the value
    return Place(
        table, array, keys, "value", setting.group(1), typed=stripped, start=start, quoted=quoted
    )


def key_at(lines: Sequence[str], line: int, character: int) -> tuple[str, str] | None:
    """The key under the cursor and the table it is in, when the cursor is
    on a key's name (``mode`` in ``mode = "required"``)."""
    if line >= len(lines):
        return None
    setting = _KEY.match(lines[line])
    if setting is None or not setting.start(1) <= character <= setting.end(1):
        return None
    header, table, array = _table_of(lines, line)
    if _keys(lines, header + 1, line)[1] is not None:
        return None  # a line inside another key's multi-line value
    return setting.group(1), (table if array else None) or ""


def _table_of(lines: Sequence[str], line: int) -> tuple[int, str | None, bool]:
    """The header line above ``line`` (-1: none), its name, whether ``[[...]]``."""
    for number in range(min(line, len(lines) - 1), -1, -1):
        found = _HEADER.match(lines[number])
        if found is not None:
            return number, found.group(2), found.group(1) == "[["
    return -1, None, False


def _keys(lines: Sequence[str], first: int, line: int) -> tuple[dict[str, int], str | None]:
    """The keys the table starting at ``first`` sets (with their lines), and
    the key whose value is still open when ``line`` starts (a multi-line
    array or inline table), if any."""
    keys: dict[str, int] = {}
    depth, last, open_key = 0, None, None
    for number in range(max(first, 0), len(lines)):
        if number == line:
            open_key = last if depth > 0 else None
        text = lines[number]
        setting = _KEY.match(text) if depth == 0 else None
        if depth == 0 and setting is None and _HEADER.match(text):
            break
        if setting is not None:
            keys[last := setting.group(1)] = number
        depth = max(depth + _depth(text[setting.end() :] if setting else text), 0)
    return keys, open_key


def _depth(text: str) -> int:
    """Brackets opened minus closed, outside strings and comments."""
    depth, quote = 0, ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
    return depth
