"""``plan.*``: thin handlers over the plan lifecycle, change sets and apply."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from acp_backend.ids import new_ulid
from acp_backend.plans.applying import apply_plan, settle_plan
from acp_backend.plans.changes import (
    build_changes,
    current_hashes,
    moved_paths,
    plan_hash,
    targets_from_diff,
    targets_from_files,
    written_paths,
)
from acp_backend.plans.execution import execute
from acp_backend.plans.findings import collect_fixes
from acp_backend.plans.lifecycle import plans_of
from acp_backend.services import Services
from acp_client.errors import InvalidParams, InvalidState
from acp_client.models import Plan, PlanOrigin, PlanPhase, PlanPreview, PlanState
from acp_client.operations import (
    PlanApplyParams,
    PlanCreateParams,
    PlanExecuteParams,
    PlanListParams,
    PlanListResult,
    PlanRef,
    PlanSettleParams,
)
from acp_client.paths import CONFIG_FILE


async def list_plans(services: Services, params: PlanListParams) -> PlanListResult:
    resource_id = None if params.resource is None else services.registry.get(params.resource).id
    return PlanListResult(plans=tuple(plans_of(services).records.find(resource_id, params.states)))


async def get(services: Services, params: PlanRef) -> Plan:
    return plans_of(services).records.get(params.plan_id)


async def create(services: Services, params: PlanCreateParams) -> Plan:
    resource = services.registry.get(params.resource)
    decisions = list(params.decisions)
    origin, title, validation = PlanOrigin.SUBMITTED, params.title or "", None
    if params.findings is not None:
        fixes = collect_fixes(services.store, resource, params.findings)
        targets = targets_from_files(resource.root, fixes.files)
        origin, title, validation = (
            PlanOrigin.FINDING_FIX,
            params.title or fixes.title,
            fixes.validation,
        )
        decisions += fixes.decisions
    elif params.diff is not None:
        targets = await asyncio.to_thread(targets_from_diff, resource.root, params.diff)
    else:
        targets = targets_from_files(resource.root, params.files or ())
    changes = await asyncio.to_thread(build_changes, targets)
    now = datetime.now(UTC)
    plan = Plan(
        id=new_ulid(),
        resource_id=resource.id,
        title=title,
        description=params.description,
        author=params.author,
        origin=origin,
        phase=PlanPhase.APPLY,
        state=PlanState.COMPLETE,
        created_at=now,
        updated_at=now,
        source_validation=validation,
        paths=written_paths(changes),
        decisions=tuple(decisions),
    )
    plans = plans_of(services)
    await plans.supersede_twins(plan, changes)
    return plans.insert(plan, changes, worker=False)


async def propose(services: Services, params: PlanExecuteParams) -> Plan:
    resource = services.registry.get(params.resource)
    plans = plans_of(services)
    await asyncio.to_thread(plans.sweep)  # before a new sandbox: clear the expired ones
    loaded = plans.validation.configs.get(Path(resource.root))
    config = next((c for c in loaded.validations if c.name == params.validation), None)
    if config is None:
        raise InvalidParams(f"params.validation: {resource.name} declares no {params.validation!r}")
    if config.fix is None:
        raise InvalidParams(
            f"params.validation: {config.name} declares no fix command",
            remedy=f"add fix = [...] to the {config.name} table of {CONFIG_FILE}",
        )
    now = datetime.now(UTC)
    plan = Plan(
        id=new_ulid(),
        resource_id=resource.id,
        title=params.title or f"Fix {config.name} findings",
        description=params.description,
        origin=PlanOrigin.VALIDATION_FIX,
        phase=PlanPhase.STRATEGIZE,
        state=PlanState.QUEUED,
        created_at=now,
        updated_at=now,
        source_validation=config.name,
        paths=tuple(params.paths or ()),
    )
    plans.insert(plan, worker=True)
    plans.tasks[plan.id] = services.tasks.spawn(
        execute(plans, plan, resource, config), name=f"plan {plan.id}"
    )
    return plan


async def preview(services: Services, params: PlanRef) -> PlanPreview:
    plans = plans_of(services)
    plan = plans.records.get(params.plan_id)
    changes = plans.records.changes(plan.id)
    if not changes:
        raise InvalidState(
            f"plan {plan.id} is {plan.phase}/{plan.state}: it has no change set yet",
            remedy="wait for plan.changed to report it complete",
        )
    root = services.registry.get(plan.resource_id).root
    current = await asyncio.to_thread(current_hashes, root, changes)
    return PlanPreview(
        plan_id=plan.id,
        state=plan.state,
        changes=tuple(changes),
        plan_hash=plan_hash(changes, current),
        moved=tuple(moved_paths(changes, current)),
    )


async def apply(services: Services, params: PlanApplyParams) -> Plan:
    return await apply_plan(plans_of(services), params)


async def settle_in_editor(services: Services, params: PlanSettleParams) -> Plan:
    return await settle_plan(plans_of(services), params)


async def cancel(services: Services, params: PlanRef) -> Plan:
    return await plans_of(services).cancel(params.plan_id)
