"""Whether a plan made things worse: its sandbox's results against the resource's.

A plan is constrained when, in its sandbox, a required validation reports a
finding that the resource's latest result of the same validation does not
have (the plan added it), fails where the resource passed, or cannot be
compared (it did not finish, or the resource has no finished result of it).
Findings the resource already had are not the plan's doing: a plan that
fixes one import in a file with five unrelated findings is complete.

Findings are matched by path, code and message, as many times as each
occurs, never by line: a fix that removes a line moves every finding below.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from acp_client.models import Finding, ResultOutcome, ValidationMode, ValidationResult

NAMED = 5  # findings named in a reason; the rest are counted

_Key = tuple[str | None, str | None, str]


def worse(
    sandbox: Sequence[ValidationResult], resource: Mapping[str, ValidationResult]
) -> list[str]:
    """Why the plan whose sandbox gave ``sandbox`` is constrained (empty:
    it is not), given the resource's latest result of each validation."""
    reasons = []
    for result in sandbox:
        if result.mode is not ValidationMode.REQUIRED or result.passed:
            continue
        before = resource.get(result.validation)
        if (
            before is None
            or before.outcome is not ResultOutcome.COMPLETED
            or result.outcome is not ResultOutcome.COMPLETED
        ):
            reasons.append(_named(result, result.findings, "fails in the sandbox"))
        elif added := _added(result.findings, before.findings):
            reasons.append(_named(result, added, "finds what the resource does not have"))
        elif before.passed:
            reasons.append(_named(result, result.findings, "passes on the resource, fails here"))
    return reasons


def _added(after: Iterable[Finding], before: Iterable[Finding]) -> list[Finding]:
    """The findings of ``after`` beyond those ``before`` already had."""
    had = Counter(_key(finding) for finding in before)
    added = []
    for finding in after:
        key = _key(finding)
        if had[key] > 0:
            had[key] -= 1
        else:
            added.append(finding)
    return added


def _key(finding: Finding) -> _Key:
    path = finding.location.path if finding.location is not None else None
    return path, finding.code, finding.message


def _named(result: ValidationResult, findings: Sequence[Finding], what: str) -> str:
    """``ruff finds …: a.py:3 F401, b.py:1 E501 and 2 more``, by place and code."""
    named = [
        f"{f.location.path}:{f.location.line + 1} {f.code or f.message}"
        for f in findings
        if f.location is not None
    ][:NAMED]
    if not named:
        return f"{result.validation} {what} ({result.message or result.outcome})"
    more = len(findings) - len(named)
    return f"{result.validation} {what}: {', '.join(named)}" + (
        f" and {more} more" if more > 0 else ""
    )
