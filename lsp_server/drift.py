"""Where a tool's lines are now: findings and fixes through unsaved edits.

A tool reads the file on disk; the user then types in the buffer without
saving. A finding or a fix on a line the user did not touch is still right,
only further up or down: the lines between the text the tool read and the
buffer are matched (``difflib``, line by line), and a position on a
matched line moves by that line's offset. A position on a line that
changed has no place any more: its finding is not shown, its fix is not
offered (the next run, after a save, has the truth).

The text the tool read is known by its digest (``acp_client.text``): the
buffer itself (nothing moved), else the buffer as last opened or saved
(the file the tool read: the buffer is it plus unsaved edits), else
unknown (nothing can be placed).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from acp_client.models import Location, TextEdit
from acp_client.text import holds


@dataclass(frozen=True, eq=False)
class LineMap:
    """Lines of the text a tool read -> lines of the buffer, where unchanged."""

    read: Sequence[str]
    now: Sequence[str]

    @cached_property
    def _moves(self) -> list[tuple[int, int, int]]:
        """(first read line, past the last, offset) of each unchanged run.

        The lines both texts start and end with are matched as they are;
        ``difflib`` matches only what lies between (typing touches one
        place: on a 10,000-line file it took a second over the whole text,
        whose many identical lines it cannot tell apart). There, lines that
        are too common to anchor a match (``autojunk``) are matched only
        next to others: fewer lines placed at worst, never a wrong one."""
        read, now = self.read, self.now
        shorter = min(len(read), len(now))
        head = next((i for i in range(shorter) if read[i] != now[i]), shorter)
        tail = next(
            (i for i in range(shorter - head) if read[-1 - i] != now[-1 - i]), shorter - head
        )
        middle = difflib.SequenceMatcher(
            None, read[head : len(read) - tail], now[head : len(now) - tail]
        )
        moves = [(0, head, 0)] if head else []
        moves += [
            (head + i1, head + i2, j1 - i1)
            for tag, i1, i2, j1, _ in middle.get_opcodes()
            if tag == "equal"
        ]
        if tail:
            moves.append((len(read) - tail, len(read), len(now) - len(read)))
        return moves

    def offset(self, first: int, last: int) -> int | None:
        """How far lines ``first``..``last`` (inclusive) of the read text moved,
        if all of them are unchanged and moved together; else None."""
        for start, end, offset in self._moves:
            if start <= first and last < end:
                return offset
        return None

    def shift(self, location: Location) -> int | None:
        """How far ``location``'s lines moved; None if one of them changed."""
        end = location.end_line if location.end_line is not None else location.line
        return self.offset(location.line, end)

    def location(self, location: Location) -> Location | None:
        offset = self.shift(location)
        if offset is None:
            return None
        if offset == 0:
            return location
        moved_end = None if location.end_line is None else location.end_line + offset
        return Location(
            path=location.path,
            line=location.line + offset,
            character=location.character,
            end_line=moved_end,
            end_character=location.end_character,
        )

    def edits(self, edits: Sequence[TextEdit], path: str) -> list[TextEdit] | None:
        """A fix's edits of ``path`` on the buffer; None when one touches a changed line."""
        moved = []
        for edit in edits:
            if edit.location.path != path:
                moved.append(edit)
                continue
            location = self.location(edit.location)
            if location is None:
                return None
            moved.append(TextEdit(location=location, new_text=edit.new_text))
        return moved


@dataclass(frozen=True, slots=True)
class Reading:
    """How a result's positions relate to a buffer: as they are (``moved``
    None and ``known``), through a line map, or not at all."""

    known: bool
    moved: LineMap | None = None

    def location(self, location: Location) -> Location | None:
        if not self.known:
            return None
        return location if self.moved is None else self.moved.location(location)


AS_READ = Reading(known=True)
LOST = Reading(known=False)


def reading(
    expected: str | None, now: str, saved: str, lines: Sequence[str], saved_lines: Sequence[str]
) -> Reading:
    """The reading of a result computed on text with digest ``expected``
    (None: unknown, taken as the buffer's) for a buffer holding ``now``,
    last opened or saved holding ``saved``."""
    if expected is None or holds(now, expected):
        return AS_READ
    if saved is not now and holds(saved, expected):
        return Reading(known=True, moved=LineMap(saved_lines, lines))
    return LOST
