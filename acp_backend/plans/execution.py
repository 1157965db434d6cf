""" "Propose fix": a validation's ``fix`` command, run in a sandbox, becomes a plan.

strategize/queued -> execute/processing (sandbox made, registered, command
run, diff taken (a diff it prints is written into the sandbox), validations
re-run in the sandbox) -> apply/complete, or apply/constrained when the
sandbox's results are worse than the resource's (``verdict``). Any failure ends
the plan errored with the reason; the sandbox stays while the plan can
still be applied, so its findings can be shown on the sandbox's files.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from acp_backend.plans import journal
from acp_backend.plans.changes import (
    PlannedFile,
    build_changes,
    read_bytes,
    read_text,
    sha256,
    targets_from_diff,
    written_paths,
)
from acp_backend.plans.lifecycle import Plans, Superseded
from acp_backend.plans.sandbox import Sandbox, create_sandbox, files
from acp_backend.plans.verdict import worse
from acp_backend.validation.config import ValidationConfig
from acp_backend.validation.runner import Ending, run_command
from acp_client.errors import AcpError, PlanError
from acp_client.models import (
    ChangeKind,
    FileChange,
    Plan,
    PlanPhase,
    PlanState,
    Resource,
    ResultOutcome,
    ValidationResult,
)

log = logging.getLogger(__name__)

_TAIL = 400


async def execute(plans: Plans, plan: Plan, resource: Resource, config: ValidationConfig) -> None:
    """The plan's task: ends with the plan in a stored, announced state.
    It stays queued while ``plans.slots`` sandboxes are already at work."""
    try:
        async with plans.slots:
            await _execute(plans, plan, resource, config)
    finally:
        plans.tasks.pop(plan.id, None)


async def _execute(plans: Plans, plan: Plan, resource: Resource, config: ValidationConfig) -> None:
    try:
        plan = plans.move(plan, phase=PlanPhase.EXECUTE, state=PlanState.PROCESSING)
        sandbox = await asyncio.to_thread(create_sandbox, resource.root, plans.sandbox_dir(plan.id))
        plans.services.registry.add_sandbox_root(resource.id, sandbox.root)
        plan = plans.move(plan, sandbox_root=sandbox.root)
        targets, printed = await _run_fix(resource, config, sandbox)
        changes = build_changes(targets)
        if printed:  # the validations below must see the fixed code
            await asyncio.to_thread(_write, plans.services.data_dir, sandbox.root, plan.id, changes)
        plan = plans.move(plan, changes=changes, paths=written_paths(changes))
        plan, worse_by = await _validate(plans, plan, resource, sandbox)
        await plans.supersede_twins(plan, changes)
        if worse_by:
            plans.move(
                plan,
                phase=PlanPhase.APPLY,
                state=PlanState.CONSTRAINED,
                reason="it makes things worse: " + "; ".join(worse_by),
            )
        else:
            plans.move(plan, phase=PlanPhase.APPLY, state=PlanState.COMPLETE)
    except asyncio.CancelledError:
        await plans.close_sandbox(plan)  # plan.cancel records the state
        raise
    except Superseded:
        await plans.close_sandbox(plans.records.get(plan.id))
    except Exception as exc:
        if not isinstance(exc, AcpError):
            log.exception("plan %s failed", plan.id)
        reason = str(exc) if isinstance(exc, AcpError) else f"internal error: {exc}"
        with contextlib.suppress(Superseded):
            plans.move(plan, state=PlanState.ERRORED, reason=reason, sandbox_root=None)
        await plans.close_sandbox(plan)


async def _run_fix(
    resource: Resource, config: ValidationConfig, sandbox: Sandbox
) -> tuple[list[PlannedFile], bool]:
    """The fix's change set, and whether the fixer printed it as a diff
    (``ruff check --fix-only --diff``) instead of writing the sandbox's files."""
    assert config.fix is not None
    before = await asyncio.to_thread(files, sandbox.root, sandbox.git)
    outcome = await run_command(
        config.fix, cwd=Path(sandbox.root), time_limit=config.timeout, shell=config.shell
    )
    if outcome.ending is not Ending.EXITED:
        why = outcome.error or f"it ended: {outcome.ending}"
        raise PlanError(f"the fix command of {config.name} failed: {why}")
    after = await asyncio.to_thread(files, sandbox.root, sandbox.git)
    written = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if written:
        _check_unmoved(resource, written, before)
        return [_written(resource, sandbox, path) for path in written], False
    if outcome.stdout.startswith(("diff --git ", "--- ")):
        # The diff applies to the sandbox as the fixer saw it, with the same
        # path jail and hunk checks as a plan made from a diff.
        targets = await asyncio.to_thread(targets_from_diff, sandbox.root, outcome.stdout)
        _check_unmoved(resource, sorted({p for t in targets for p in (t.path, t.source)}), before)
        return targets, True
    tail = outcome.stderr.strip()[-_TAIL:] or outcome.stdout.strip()[-_TAIL:]
    detail = f" (exit status {outcome.status}: {tail})" if outcome.status else ""
    raise PlanError(f"the fix command of {config.name} changed nothing{detail}")


def _check_unmoved(resource: Resource, paths: list[str], before: dict[str, str]) -> None:
    """Each path is in the resource as the fixer found it in the sandbox."""
    for path in paths:
        base_bytes = read_bytes(resource.root, path)
        if (None if base_bytes is None else sha256(base_bytes)) != before.get(path):
            raise PlanError(
                f"{path} changed in the resource while the fix ran", remedy="propose the fix again"
            )


def _written(resource: Resource, sandbox: Sandbox, path: str) -> PlannedFile:
    base = read_text(resource.root, path)
    new = read_text(sandbox.root, path)
    if base is None:
        kind = ChangeKind.CREATE
    else:
        kind = ChangeKind.DELETE if new is None else ChangeKind.MODIFY
    return PlannedFile(kind, path, base, new, _executable(sandbox.root, path))


def _write(data_dir: Path, root: str, plan_id: str, changes: list[FileChange]) -> None:
    """Write a change set into the sandbox the way a plan apply writes it:
    jailed, staged, then renamed into place (a crash rolls it back)."""
    with journal.apply_lock(data_dir):
        staged = journal.stage(data_dir, root, plan_id, changes)
        journal.roll_forward(staged)
        journal.finish(data_dir, plan_id)


def _executable(root: str, path: str) -> bool:
    full = Path(root, path)
    return full.exists() and bool(full.stat().st_mode & 0o100)


async def _validate(
    plans: Plans, plan: Plan, resource: Resource, sandbox: Sandbox
) -> tuple[Plan, list[str]]:
    """Run the validations concerned by the plan's paths in the sandbox, wait,
    and say how the plan makes things worse than the resource's latest
    results (``verdict``). A validation the resource has no finished result
    of runs on the resource too, at the same time: a verdict needs both."""
    loaded = plans.validation.configs.get(Path(resource.root))
    selected = [c for c in loaded.validations if c.applies_to_any(plan.paths)]
    if not selected:
        return plan, []
    runs = plans.validation.runs
    started = await runs.start(resource.id, Path(sandbox.root), selected, plan_id=plan.id)
    plan = plans.move(plan, validation_run_id=started.run_id)
    baseline = _latest(plans, resource, selected)
    unknown = [c for c in selected if c.name not in baseline]
    waits = [_completion(plans, started.run_id, started.started_event_id)]
    if unknown:
        on_resource = await runs.start(resource.id, Path(resource.root), unknown)
        waits.append(_completion(plans, on_resource.run_id, on_resource.started_event_id))
    try:
        await asyncio.gather(*waits)
    except asyncio.CancelledError:
        await asyncio.shield(runs.cancel(started.run_id))
        raise
    results = _of_run(plans, started.run_id)
    if unknown:
        baseline = _latest(plans, resource, selected)
    return plan, worse(results, baseline)


def _latest(
    plans: Plans, resource: Resource, selected: list[ValidationConfig]
) -> dict[str, ValidationResult]:
    """The resource's latest result of each selected validation, if it finished."""
    names = {c.name for c in selected}
    latest: dict[str, ValidationResult] = {}
    cursor = None
    while True:
        page, cursor = plans.services.store.latest_results(resource.id, after=cursor)
        latest.update(
            (r.validation, r)
            for r in page
            if r.validation in names and r.outcome is ResultOutcome.COMPLETED
        )
        if cursor is None:
            return latest


def _of_run(plans: Plans, run_id: str) -> list[ValidationResult]:
    rows = plans.services.store.query(
        "SELECT body FROM validation_results WHERE run_id = ? ORDER BY id", (run_id,)
    )
    return [ValidationResult.model_validate_json(row["body"]) for row in rows]


async def _completion(plans: Plans, run_id: str, started_event_id: int) -> None:
    stream = plans.services.events.subscribe(started_event_id)
    try:
        async for message in stream:
            params = message["params"]
            if message["method"] == "validation.completed" and params.get("run_id") == run_id:
                return
    finally:
        await stream.aclose()
