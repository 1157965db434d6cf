"""``plan.apply``: the hash guard, the jail, the journaled write, the record.

Everything between reading the targets and recording the plan applied
happens under the data dir's apply lock, so no other backend process can
slip a write in between the check and the write. The database commit that
marks the plan applied is the journal's commit point (see ``journal``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from acp_backend.plans import journal
from acp_backend.plans.changes import (
    applied_hashes,
    current_contents,
    expected_hashes,
    hashes_of,
    moved_paths,
    plan_hash,
    produced_by_edits,
    produced_lines,
    written_paths,
)
from acp_backend.plans.lifecycle import Plans, Superseded
from acp_client.appliable import why_not_appliable
from acp_client.errors import Conflict, InvalidState, NotFound, PlanError
from acp_client.events import PlanApplied, PlanChanged
from acp_client.models import (
    APPLIABLE_PLAN_STATES,
    FileChange,
    Plan,
    PlanPhase,
    PlanState,
    Resource,
)
from acp_client.operations import PlanApplyParams


def _refuse_unless_appliable(plan: Plan, params: PlanApplyParams) -> None:
    """The one rule (``acp_client.appliable``), before the lock and under it."""
    refusal = why_not_appliable(plan, params.force)
    if refusal is not None:
        raise InvalidState(
            f"plan {plan.id} cannot be applied: {refusal.reason}", remedy=refusal.remedy
        )


def _conflict(paths: Sequence[str], why: str) -> Conflict:
    return Conflict(
        f"{', '.join(paths)} changed since the preview" if paths else why,
        remedy="preview the plan again and review the new change set",
        data={"paths": list(paths)},
    )


def _check(
    changes: Sequence[FileChange], current: dict[str, str | None], params: PlanApplyParams
) -> None:
    if params.applied_by_client:
        if params.expected_hash != plan_hash(changes, expected_hashes(changes)):
            raise _conflict([], "the plan is not the one previewed")
        base, done = expected_hashes(changes), applied_hashes(changes)
        strange = sorted(p for p, sha in current.items() if sha not in (base[p], done[p]))
        if strange:
            raise _conflict(strange, "")
        return
    moved = moved_paths(changes, current)
    if moved:
        raise _conflict(moved, "")
    if params.expected_hash != plan_hash(changes, current):
        raise _conflict([], "the plan's change set is not the one previewed")


def _apply_locked(
    plans: Plans, plan: Plan, resource: Resource, changes: list[FileChange], params: PlanApplyParams
) -> Plan:
    """Runs in a worker thread, under the apply lock."""
    with journal.apply_lock(plans.services.data_dir):
        plan = plans.records.get(plan.id)  # another process may have moved it
        _refuse_unless_appliable(plan, params)
        contents = current_contents(resource.root, changes)
        _check(changes, hashes_of(contents), params)
        # The editor's apply is recorded with the lines its edits produced.
        lines = {change.path: produced_by_edits(change) for change in changes}
        staged = None
        if not params.applied_by_client:
            for change in changes:
                base = contents[change.old_path or change.path]
                text = None if base is None else base.decode("utf-8")
                lines[change.path] = produced_lines(change, text)
            try:
                staged = journal.stage(plans.services.data_dir, resource.root, plan.id, changes)
            except OSError as exc:  # stage rolled itself back: nothing was written
                raise PlanError(
                    f"plan {plan.id} could not be written: {exc}",
                    remedy="check the files' permissions and the disk",
                ) from None
        applied = plan.model_copy(
            update={
                "phase": PlanPhase.APPLY,
                "state": PlanState.APPLIED,
                "forced": plan.state is PlanState.CONSTRAINED,
                "sandbox_root": None,
                "updated_at": datetime.now(UTC),
            }
        )
        if not plans.records.transition(applied, APPLIABLE_PLAN_STATES, applied_lines=lines):
            if staged is not None:
                journal.roll_back(plans.services.data_dir, staged)
            raise Superseded(plan.id)
        if staged is not None:
            journal.roll_forward(staged)
            journal.finish(plans.services.data_dir, plan.id)
        return applied


async def apply_plan(plans: Plans, params: PlanApplyParams) -> Plan:
    plan = plans.records.get(params.plan_id)
    _refuse_unless_appliable(plan, params)
    resource = plans.services.registry.get(plan.resource_id)
    changes = plans.records.changes(plan.id)
    try:
        applied = await asyncio.to_thread(_apply_locked, plans, plan, resource, changes, params)
    except Superseded:
        raise InvalidState(f"plan {plan.id} changed state while being applied") from None
    announce(plans, applied, written_paths(changes), params.applied_by_client)
    await plans.close_sandbox(plan)
    if not params.applied_by_client:
        plans.rerun(resource, written_paths(changes))
    return applied


def announce(plans: Plans, plan: Plan, paths: tuple[str, ...], by_client: bool = False) -> None:
    plans.services.events.publish(PlanChanged, plan=plan)
    plans.services.events.publish(
        PlanApplied,
        plan_id=plan.id,
        resource_id=plan.resource_id,
        paths=paths,
        forced=plan.forced,
        applied_by_client=by_client,
    )


def recover(plans: Plans) -> None:
    """Settle applies a crash interrupted (at start; skipped while another
    process is applying, since its journals are live)."""
    data_dir: Path = plans.services.data_dir
    with journal.apply_lock(data_dir, wait=False) as locked:
        if not locked:
            return

        def committed(plan_id: str) -> bool:
            try:
                return plans.records.get(plan_id).state is PlanState.APPLIED
            except NotFound:
                return False

        for plan_id in journal.recover(data_dir, committed):
            plan = plans.records.get(plan_id)
            announce(plans, plan, written_paths(plans.records.changes(plan_id)))
