"""A result of a run that covered only some files (``{files}`` on a save),
merged into the result it continues (ADR 0017).

The backend stores the merged result; an event subscriber that asked for
partial results gets only the covered files' findings and merges them here,
the same way: the run's own findings first (those of the covered files and
any without a file), then the earlier result's findings for every other
file. Own findings first keeps each index the same in the partial event and
in the stored result, so a reference to a finding (``FindingRef``) holds.
"""

from __future__ import annotations

from collections.abc import Collection

from acp_client.models import Finding


def covers(finding: Finding, covered: Collection[str]) -> bool:
    """The finding belongs to a run that covered ``covered``."""
    return finding.location is None or finding.location.path in covered


def merge_covered(
    fresh: tuple[Finding, ...], covered: Collection[str], earlier: tuple[Finding, ...]
) -> tuple[Finding, ...]:
    """``fresh``'s findings for the covered files, then ``earlier``'s for the others."""
    own = tuple(finding for finding in fresh if covers(finding, covered))
    # Inlined ``not covers``: this pass is over every finding carried over.
    kept = tuple(f for f in earlier if f.location is not None and f.location.path not in covered)
    return own + kept
