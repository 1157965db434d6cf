"""Which of the tools' fixes "Fix all" takes: one rule for the editor's
"Fix all" (``source.fixAll.acp``) and ``acp-lsp check --fix``.

Each finding with a fix counts once, with its first fix, in a fixed order:
by validation name, then by the finding's place in its result. A fix is
taken unless one of its edits overlaps (or touches) an edit already taken
in the same file (``acp_client.text.TakenEdits``); a skipped fix is
offered again after the next run, on the text the taken ones left.
"""

from __future__ import annotations

from collections.abc import Iterable

from acp_client.models import ValidationResult
from acp_client.text import TakenEdits

Candidate = tuple[ValidationResult, int]
"""A result and the index of one of its findings."""


def fix_all(candidates: Iterable[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    """The findings whose first fix is taken, and those skipped (both in
    the rule's order); findings without a fix are neither."""
    fixable = sorted(
        (
            (result, index)
            for result, index in candidates
            if 0 <= index < len(result.findings) and result.findings[index].fixes
        ),
        key=lambda candidate: (candidate[0].validation, candidate[0].id, candidate[1]),
    )
    taken: list[Candidate] = []
    skipped: list[Candidate] = []
    edits = TakenEdits()
    for result, index in fixable:
        fix = result.findings[index].fixes[0].edits
        if edits.overlaps(fix):
            skipped.append((result, index))
            continue
        edits.take(fix)
        taken.append((result, index))
    return taken, skipped
