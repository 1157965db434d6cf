"""What the user can do about a finding now: one rule for the code actions
that offer it and for the hover that tells of it.

- **Fix with *tool***: the finding carries its tool's fix (``Finding.fixes``,
  any but a display-only one) and the text the fix replaces is still there, moved with the unsaved
  edits (``fitted``). When that text changed, the fix is *withheld* until a
  save runs the tool again.
- **Propose fix with *validation***: the validation declares a fix command
  (``ValidationSpec.has_fix``) and the file is one of a resource's own, not
  a plan's sandbox copy.

Both answers come from the contract's facts as the session holds them, so
hover never promises what the menu does not offer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acp_client.fixes import offered_alone
from acp_client.models import Finding, TextEdit, ValidationResult
from lsp_server.snapshot import Snapshot


@dataclass(frozen=True)
class Remedies:
    """What the code-action menu offers for one finding."""

    tool_fixes: int = 0
    """How many of the tool's fixes the menu offers ("Fix with *tool*")."""
    withheld: bool = False
    """The tool's fixes exist but their text changed since it ran."""
    proposal: bool = False
    """ "Propose fix with *validation*" is offered."""


NONE = Remedies()


def fitted(
    snapshot: Snapshot, result: ValidationResult, edits: Sequence[TextEdit]
) -> list[TextEdit] | None:
    """A fix's edits as they apply to the document now: moved with the lines
    the user's unsaved edits moved; None when one of its lines changed (or
    the result was computed on other text altogether)."""
    reading = snapshot.reading(result)
    if not reading.known:
        return None
    if reading.moved is None or snapshot.placement is None:
        return list(edits)
    return reading.moved.edits(edits, snapshot.placement.logical_path)


def proposable(snapshot: Snapshot, validation: str) -> bool:
    """Whether "Propose fix with ``validation``" is offered on this document."""
    placement = snapshot.placement
    if placement is None or placement.sandbox:
        return False
    spec = snapshot.specs.get(validation)
    return spec is not None and spec.has_fix


def remedies(snapshot: Snapshot, result: ValidationResult, finding: Finding) -> Remedies:
    offered = [fix for fix in finding.fixes if offered_alone(fix)]
    fits = sum(fitted(snapshot, result, fix.edits) is not None for fix in offered)
    return Remedies(
        tool_fixes=fits,
        withheld=bool(offered) and not fits,
        proposal=proposable(snapshot, result.validation),
    )
