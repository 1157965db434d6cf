"""Which of the tools' fixes "Fix all" takes: one rule for the editor's
"Fix all" (``source.fixAll.acp``) and ``acp-lsp check --fix``.

A fix is as safe as its tool says (``FixApplicability``): bulk fixing
takes safe fixes, unsafe ones only when the user opts in (ruff's
``--unsafe-fixes``), display-only ones never. Each finding counts once, with
its first fix bulk fixing may take (``bulk_fix``), in a fixed order: by
validation name, then by the finding's place in its result. A fix is taken
unless one of its edits overlaps (or touches) an edit already taken in the
same file (``acp_client.text.TakenEdits``); a skipped fix is offered again
after the next run, on the text the taken ones left.
"""

from __future__ import annotations

from collections.abc import Iterable

from acp_client.models import Finding, FindingFix, FixApplicability, ValidationResult
from acp_client.text import TakenEdits

Candidate = tuple[ValidationResult, int]
"""A result and the index of one of its findings."""


def offered_alone(fix: FindingFix) -> bool:
    """Whether a fix is offered on its own ("Fix with *tool*"): any but one
    its tool only displays. Hover and the code-action menu both ask this."""
    return fix.applicability is not FixApplicability.DISPLAY_ONLY


def bulk_fix_index(finding: Finding, unsafe: bool = False) -> int | None:
    """Which of ``finding``'s fixes "Fix all" and ``check --fix`` take: its
    first safe one (or unsafe, with ``unsafe``); None when it has none."""
    allowed = {FixApplicability.SAFE} | ({FixApplicability.UNSAFE} if unsafe else set())
    return next(
        (number for number, fix in enumerate(finding.fixes) if fix.applicability in allowed),
        None,
    )


def bulk_fix(finding: Finding, unsafe: bool = False) -> FindingFix | None:
    """The fix itself (``bulk_fix_index``)."""
    number = bulk_fix_index(finding, unsafe)
    return None if number is None else finding.fixes[number]


def fix_all(
    candidates: Iterable[Candidate], *, unsafe: bool = False
) -> tuple[list[Candidate], list[Candidate]]:
    """The findings whose fix is taken, and those skipped (both in the
    rule's order); findings without a fix bulk fixing may take are neither."""
    fixable = sorted(
        (
            (result, index, found)
            for result, index in candidates
            if 0 <= index < len(result.findings)
            and (found := bulk_fix(result.findings[index], unsafe)) is not None
        ),
        key=lambda candidate: (candidate[0].validation, candidate[0].id, candidate[1]),
    )
    taken: list[Candidate] = []
    skipped: list[Candidate] = []
    edits = TakenEdits()
    for result, index, fix in fixable:
        if edits.overlaps(fix.edits):
            skipped.append((result, index))
            continue
        edits.take(fix.edits)
        taken.append((result, index))
    return taken, skipped
