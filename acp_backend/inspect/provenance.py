"""Provenance: the plans that made a line what it is, and those about to change it.

An apply records the lines of the new content each plan produced
(``plan_applied_lines``); the new content itself is in the plan's change
set. Later edits move lines, so the recorded range is re-located by
content: the file as applied is diffed against the text now and the range
follows the lines that are still equal. Lines rewritten since are no longer
the plan's, and it is not shown for them. Pending plans (complete or
constrained, with a change set) show on the lines their edits would touch.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from acp_backend.plans.records import PlanRecords, applied_lines
from acp_backend.store import Store
from acp_client.models import APPLIABLE_PLAN_STATES, ContextPlan, FileChange, Location, Plan
from acp_client.text import BOM, split_lines


@dataclass(frozen=True)
class Recorded:
    """Lines ``start``..``end`` (exclusive; equal: lines removed before
    ``start``) of a file as ``plan`` left it, with that content."""

    plan: Plan
    start: int
    end: int
    applied_at: datetime
    applied_text: str | None


def recorded(store: Store, resource_id: str, path: str) -> list[Recorded]:
    """Every applied plan's recorded lines of ``path``, newest first."""
    records = PlanRecords(store)
    texts: dict[str, str | None] = {}
    found: list[Recorded] = []
    for applied in applied_lines(store, resource_id, path):
        plan_id = applied.plan.id
        if plan_id not in texts:
            texts[plan_id] = next(
                (c.new_text for c in records.changes(plan_id) if c.path == path), None
            )
        found.append(
            Recorded(
                applied.plan,
                applied.start_line,
                applied.end_line,
                applied.applied_at,
                texts[plan_id],
            )
        )
    return found


class LineMap:
    """Where each line of an earlier text is in a later one (None: rewritten since)."""

    def __init__(self, then: Sequence[str], now: Sequence[str]) -> None:
        self._moves: dict[int, int] = {}
        matcher = difflib.SequenceMatcher(None, then, now, autojunk=False)
        for block in matcher.get_matching_blocks():
            for offset in range(block.size):
                self._moves[block.a + offset] = block.b + offset
        self.identical = list(then) == list(now)

    def __call__(self, line: int) -> int | None:
        return self._moves.get(line)


def where_now(record: Recorded, moves: LineMap | None) -> tuple[int, int] | None:
    """The recorded lines' range in the text now (end exclusive), or None
    when none of them survived. Without a map the record is taken as is."""
    if moves is None or moves.identical:
        return record.start, record.end
    if record.start == record.end:  # a removal: it sits before the line that followed
        line = moves(record.start)
        return None if line is None else (line, line)
    survivors = [
        moved for line in range(record.start, record.end) if (moved := moves(line)) is not None
    ]
    return (min(survivors), max(survivors) + 1) if survivors else None


def touches(span: tuple[int, int], line: int) -> bool:
    start, end = span
    return start <= line < max(end, start + 1)


def applied_here(
    records: Sequence[Recorded], path: str, line: int, now: str | None, maps: dict[str, LineMap]
) -> list[ContextPlan]:
    """The applied plans whose recorded lines are, now, at ``line``. ``maps``
    caches one diff per applied content (several plans may share one)."""
    here: list[ContextPlan] = []
    seen: set[str] = set()
    # Lines as an editor shows them: a BOM is in none (the applied content
    # keeps the file's). Split only when a record needs them: most files have none.
    current: list[str] | None = None
    for record in records:
        moves = None
        if now is not None and record.applied_text is not None:
            key = record.applied_text
            moves = maps.get(key)
            if moves is None:
                current = split_lines(now.removeprefix(BOM)) if current is None else current
                moves = maps[key] = LineMap(split_lines(key.removeprefix(BOM)), current)
        span = where_now(record, moves)
        if span is None or not touches(span, line) or record.plan.id in seen:
            continue
        seen.add(record.plan.id)
        here.append(
            ContextPlan(
                plan=record.plan,
                applied_at=record.applied_at,
                location=Location(
                    path=path, line=span[0], character=0, end_line=span[1], end_character=0
                ),
                relocated=span != (record.start, record.end),
            )
        )
    return here


def pending_here(store: Store, resource_id: str, path: str, line: int) -> list[ContextPlan]:
    """Plans ready to apply whose edits would touch ``line`` of ``path``."""
    records = PlanRecords(store)
    here: list[ContextPlan] = []
    for plan in records.find(resource_id, APPLIABLE_PLAN_STATES):
        spans = (
            span
            for change in records.changes(plan.id)
            if path in (change.path, change.old_path)
            for span in edit_spans(change)
            if touches(span, line)
        )
        span = next(spans, None)
        if span is not None:
            here.append(ContextPlan(plan=plan, location=_lines(path, span)))
    return here


def edit_spans(change: FileChange) -> Iterator[tuple[int, int]]:
    """The lines of its base each edit of ``change`` replaces (end exclusive;
    equal for an insertion before that line)."""
    for edit in change.edits:
        at = edit.location
        end = at.line if at.end_line is None else at.end_line
        yield at.line, end + 1 if at.end_character else end


def _lines(path: str, span: tuple[int, int]) -> Location:
    return Location(path=path, line=span[0], character=0, end_line=span[1], end_character=0)
