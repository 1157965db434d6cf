"""``acp-lsp check --fix``: the tools' own fixes, applied through the plan path.

The fixes "Fix all" takes in the editor, by the same rule
(``acp_client.fixes``: safe ones, unsafe ones too with ``--unsafe-fixes``),
applied through the plan path: one plan from the
fixes attached to the findings in scope (``plan.create`` with
``findings``), its preview, then ``plan.apply`` with the previewed hash,
which re-runs the validations the fixes concern. The backend refuses stale
fixes (CONFLICT), so a fix is never applied to content it was not computed
on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from acp_client.client import AcpClient
from acp_client.fixes import bulk_fix_index, fix_all
from acp_client.follow import follow_runs
from acp_client.models import FindingRef, Plan, Resource, ValidationResult

AUTHOR = "acp-lsp check --fix"


def fix_refs(
    resource: Resource,
    results: Sequence[ValidationResult],
    covers: Callable[[str], bool],
    *,
    unsafe: bool = False,
) -> tuple[FindingRef, ...]:
    """The fixes "Fix all" takes among the findings in scope (with
    ``unsafe``, the tools' unsafe fixes too)."""
    in_scope = [
        (result, index)
        for result in results
        for index, finding in enumerate(result.findings)
        if finding.location is not None
        and covers(os.path.join(resource.root, finding.location.path))
    ]
    taken, _ = fix_all(in_scope, unsafe=unsafe)
    refs = []
    for result, index in taken:
        number = bulk_fix_index(result.findings[index], unsafe)
        assert number is not None  # fix_all took it
        refs.append(FindingRef(result_id=result.id, finding=index, fix=number))
    return tuple(refs)


async def apply_fixes(
    client: AcpClient,
    resource: Resource,
    results: Sequence[ValidationResult],
    covers: Callable[[str], bool],
    *,
    unsafe: bool = False,
) -> Plan | None:
    """Apply the fixes in scope as one plan, and wait for the validation runs
    the apply started (their results are then the latest); None when there
    are no fixes."""
    refs = fix_refs(resource, results, covers, unsafe=unsafe)
    if not refs:
        return None
    before = await client.last_event_id()
    plan = await client.plan_create(resource.id, findings=refs, author=AUTHOR)
    preview = await client.plan_preview(plan.id)
    applied = await client.plan_apply(plan.id, preview.plan_hash)
    await follow_runs(client, before, resource.id)
    return applied
