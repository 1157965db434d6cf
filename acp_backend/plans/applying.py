"""``plan.apply``: the hash guard, the jail, the journaled write, the record;
and ``plan.settle``, for a plan an editor applied to its buffers.

Everything between reading the targets and recording the plan applied
happens under the data dir's apply lock, so no other backend process can
slip a write in between the check and the write. The database commit that
marks the plan applied is the journal's commit point (see ``journal``).

A plan applied by a client (``applied_by_client``: the editor's buffers
hold it, the disk does not yet) is ``in_editor`` until ``plan.settle``
finds its change on disk (``applied``, announced then) or, the client's
buffers no longer holding it, the files back as they were (``complete``, or
``constrained`` if it was forced): an undo before saving leaves no trace
(ADR 0023).
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
from acp_client.operations import PlanApplyParams, PlanSettleParams


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
        in_editor = params.applied_by_client  # on disk once saved (plan.settle)
        applied = plan.model_copy(
            update={
                "phase": PlanPhase.APPLY,
                "state": PlanState.IN_EDITOR if in_editor else PlanState.APPLIED,
                "forced": plan.state is PlanState.CONSTRAINED,
                "sandbox_root": plan.sandbox_root if in_editor else None,
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
    if applied.state is PlanState.IN_EDITOR:  # announced as applied once it is on disk
        plans.services.events.publish(PlanChanged, plan=applied)
        return applied
    announce(plans, applied, written_paths(changes))
    await plans.close_sandbox(plan)
    await plans.rerun(resource, written_paths(changes))
    return applied


def _settle_locked(plans: Plans, params: PlanSettleParams) -> tuple[Plan, bool]:
    """Runs in a worker thread, under the apply lock: the plan as it stands
    after settling, and whether it moved."""
    with journal.apply_lock(plans.services.data_dir):
        plan = plans.records.get(params.plan_id)
        if plan.state is not PlanState.IN_EDITOR:
            return plan, False
        resource = plans.services.registry.get(plan.resource_id)
        changes = plans.records.changes(plan.id)
        now = hashes_of(current_contents(resource.root, changes))
        if all(now[path] == sha for path, sha in applied_hashes(changes).items()):
            update: dict[str, object] = {"state": PlanState.APPLIED, "sandbox_root": None}
        elif not params.in_buffers and all(
            now[path] == sha for path, sha in expected_hashes(changes).items()
        ):
            was = PlanState.CONSTRAINED if plan.forced else PlanState.COMPLETE
            update = {"state": was, "forced": False}
        else:
            return plan, False  # partly saved, or still in the buffers: as it is
        moved = plan.model_copy(update={**update, "updated_at": datetime.now(UTC)})
        if not plans.records.transition(moved, (PlanState.IN_EDITOR,)):
            return plans.records.get(plan.id), False
        if moved.state is not PlanState.APPLIED:
            plans.records.forget_applied_lines(plan.id)
        return moved, True


async def settle_plan(plans: Plans, params: PlanSettleParams) -> Plan:
    """``plan.settle``: an ``in_editor`` plan's change reached the disk, or
    left the client's buffers; any other plan is answered as it is."""
    before = plans.records.get(params.plan_id)
    settled, moved = await asyncio.to_thread(_settle_locked, plans, params)
    if not moved:
        return settled
    if settled.state is PlanState.APPLIED:
        changes = plans.records.changes(settled.id)
        announce(plans, settled, written_paths(changes), by_client=True)
        await plans.close_sandbox(before)
    else:
        plans.services.events.publish(PlanChanged, plan=settled)
    return settled


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
