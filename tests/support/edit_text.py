"""Apply LSP text edits to a string as an editor does (positions in the
negotiated unit): the check that an edit means what it says."""

from __future__ import annotations

import re

from lsprotocol import types

_BREAK = re.compile(r"\r\n|\r|\n")


def offset(text: str, position: types.Position, encoding: str) -> int:
    """The string index of an LSP position in ``text``."""
    starts = [0, *(m.end() for m in _BREAK.finditer(text))]
    if position.line >= len(starts):
        return len(text)
    start = starts[position.line]
    end = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    line = _BREAK.sub("", text[start:end])
    units = index = 0
    while index < len(line) and units < position.character:
        char = line[index]
        if encoding == "utf-8":
            units += len(char.encode("utf-8"))
        else:
            units += 2 if encoding == "utf-16" and ord(char) > 0xFFFF else 1
        index += 1
    return start + index


def apply_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    spans = sorted(
        (
            (offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text)
            for e in edits
        ),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
