"""Context snippets (``ContextInfo.items``): short, because a hover is a tooltip.

In this order, while the budget lasts:
- the entity's first lines (``ENTITY_LINES`` of them, from its first
  decorator), when the line asked about is below them: deep in a long
  definition, how it starts; near its start, the editor shows it already;
- per rule (validation and code) of the findings here: how many other
  findings of it the file has, and the first ``OTHER_PLACES`` of their lines.

A rule's description and link are not repeated here: each finding carries
them (``Finding.rule_description``, ``help_uri``), and hover shows them with it.

An item about a finding here has that finding's place as its ``location``,
so a client that narrows a line's answer to a character drops it with the
finding; the entity's lines are located whole (no end character).

All items together hold at most ``BUDGET_LINES`` body lines and
``BUDGET_BYTES`` bytes (UTF-8, titles included); a snippet line is cut at
``LINE_WIDTH`` characters. An item that does not fit is cut, or left out.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from acp_backend.inspect.entities import Definition
from acp_client.models import ContextFinding, ContextItem, EntityKind, Location, ValidationResult

ENTITY_LINES = 6
OTHER_PLACES = 3
LINE_WIDTH = 120
BUDGET_LINES = 14
BUDGET_BYTES = 2048


@dataclass(frozen=True)
class Budget:
    lines: int = BUDGET_LINES
    size: int = BUDGET_BYTES


def items_for(
    path: str,
    line: int,
    *,
    definition: Definition | None,
    here: Sequence[ContextFinding],
    results: Iterable[ValidationResult],
    text_of: Callable[[int], str],
    language: str,
    budget: Budget = Budget(),
) -> tuple[ContextItem, ...]:
    """The snippets about ``line`` of ``path``; ``text_of(n)`` is line ``n``."""
    wanted = [
        *_entity_lines(path, line, definition, text_of),
        *_same_rule(path, line, here=here, results=results, text_of=text_of, language=language),
    ]
    return tuple(_within(wanted, budget))


def _entity_lines(
    path: str, line: int, definition: Definition | None, text_of: Callable[[int], str]
) -> Iterator[ContextItem]:
    if definition is None or definition.kind is EntityKind.KEY:
        return
    where = definition.location
    last = where.end_line if where.end_line is not None else where.line
    shown = min(last, where.line + ENTITY_LINES - 1)
    if line <= shown:
        return  # among its first lines: on the screen already
    lines = textwrap.dedent("\n".join(text_of(n) for n in range(where.line, shown + 1)))
    body = "\n".join(_cut(text) for text in lines.split("\n"))
    more = f", {last - shown} more" if last > shown else ""
    yield ContextItem(
        title=f"{definition.name} ({definition.kind}), lines {where.line + 1}-{last + 1}{more}",
        body=body,
        location=Location(path=path, line=where.line, character=0, end_line=shown),
        language=definition.language,
    )


def _same_rule(
    path: str,
    line: int,
    *,
    here: Sequence[ContextFinding],
    results: Iterable[ValidationResult],
    text_of: Callable[[int], str],
    language: str,
) -> Iterator[ContextItem]:
    anchors = {(h.validation, h.finding.code): h.finding.location for h in reversed(here)}
    rules = {rule for rule in anchors if rule[1]}
    if not rules:
        return
    places: dict[tuple[str, str | None], list[int]] = {rule: [] for rule in rules}
    for result in results:
        for finding in result.findings:
            rule = (result.validation, finding.code)
            where = finding.location
            if rule not in places or where is None or where.path != path:
                continue
            if where.line <= line <= (where.line if where.end_line is None else where.end_line):
                continue  # here (the line's findings), not elsewhere
            places[rule].append(where.line)
    for (validation, code), lines in sorted(places.items(), key=lambda item: str(item[0])):
        if not lines:
            continue
        lines.sort()
        count = len(lines)
        noun = "finding" if count == 1 else "findings"
        body = "\n".join(f"{n + 1}: {_cut(text_of(n).strip())}" for n in lines[:OTHER_PLACES])
        if count > OTHER_PLACES:
            body += f"\n… and {count - OTHER_PLACES} more"
        yield ContextItem(
            title=f"{count} more {code} {noun} in this file ({validation})",
            body=body,
            location=anchors[(validation, code)],
            language=language,
        )


def _within(items: Iterable[ContextItem], budget: Budget) -> Iterator[ContextItem]:
    lines, size = budget.lines, budget.size
    for item in items:
        cost = len(item.title.encode("utf-8"))
        if cost > size:
            continue
        kept: list[str] = []
        for text in item.body.split("\n") if item.body else []:
            length = len(text.encode("utf-8")) + 1
            if len(kept) >= lines or cost + length > size:
                break
            kept.append(text)
            cost += length
        body = "\n".join(kept)
        if item.body and not body:
            continue  # nothing of it fits
        lines -= len(kept)
        size -= cost
        yield item if body == item.body else item.model_copy(update={"body": body})


def _cut(text: str) -> str:
    return text if len(text) <= LINE_WIDTH else text[: LINE_WIDTH - 1] + "…"
