""" "Propose fix": a validation's ``fix`` command, run in a sandbox, becomes a plan.

strategize/queued -> execute/processing (sandbox made, registered, command
run, diff taken, validations re-run in the sandbox) -> apply/complete, or
apply/constrained when a required validation failed there. Any failure ends
the plan errored with the reason; the sandbox stays while the plan can
still be applied, so its findings can be shown on the sandbox's files.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

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
from acp_backend.validation.config import ValidationConfig
from acp_backend.validation.runner import Ending, run_command
from acp_client.errors import AcpError, PlanError
from acp_client.models import (
    ChangeKind,
    Plan,
    PlanPhase,
    PlanState,
    Resource,
    ValidationMode,
    ValidationResult,
)

log = logging.getLogger(__name__)

_TAIL = 400


async def execute(plans: Plans, plan: Plan, resource: Resource, config: ValidationConfig) -> None:
    """The plan's task: ends with the plan in a stored, announced state."""
    try:
        plan = plans.move(plan, phase=PlanPhase.EXECUTE, state=PlanState.PROCESSING)
        sandbox = await asyncio.to_thread(create_sandbox, resource.root, plans.sandbox_dir(plan.id))
        plans.services.registry.add_sandbox_root(resource.id, sandbox.root)
        plan = plans.move(plan, sandbox_root=sandbox.root)
        targets = await _run_fix(resource, config, sandbox)
        changes = build_changes(targets)
        plan = plans.move(plan, changes=changes, paths=written_paths(changes))
        plan, failed = await _validate(plans, plan, resource, sandbox)
        if failed:
            plans.move(
                plan,
                phase=PlanPhase.APPLY,
                state=PlanState.CONSTRAINED,
                reason="required validation failed in the sandbox: " + "; ".join(failed),
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
    finally:
        plans.tasks.pop(plan.id, None)


async def _run_fix(
    resource: Resource, config: ValidationConfig, sandbox: Sandbox
) -> list[PlannedFile]:
    assert config.fix is not None
    before = await asyncio.to_thread(files, sandbox.root, sandbox.git)
    outcome = await run_command(
        config.fix, cwd=Path(sandbox.root), time_limit=config.timeout, shell=config.shell
    )
    if outcome.ending is not Ending.EXITED:
        why = outcome.error or f"it ended: {outcome.ending}"
        raise PlanError(f"the fix command of {config.name} failed: {why}")
    after = await asyncio.to_thread(files, sandbox.root, sandbox.git)
    targets = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) == after.get(path):
            continue
        base_bytes = read_bytes(resource.root, path)
        if (None if base_bytes is None else sha256(base_bytes)) != before.get(path):
            raise PlanError(
                f"{path} changed in the resource while the fix ran", remedy="propose the fix again"
            )
        base = read_text(resource.root, path)
        new = read_text(sandbox.root, path)
        kind = (
            ChangeKind.CREATE
            if base is None
            else ChangeKind.DELETE
            if new is None
            else ChangeKind.MODIFY
        )
        targets.append(PlannedFile(kind, path, base, new, _executable(sandbox.root, path)))
    if not targets and outcome.stdout.startswith(("diff --git ", "--- ")):
        # A fixer that prints its fix as a diff instead (``ruff check --diff``).
        return await asyncio.to_thread(targets_from_diff, resource.root, outcome.stdout)
    if not targets:
        tail = outcome.stderr.strip()[-_TAIL:] or outcome.stdout.strip()[-_TAIL:]
        detail = f" (exit status {outcome.status}: {tail})" if outcome.status else ""
        raise PlanError(f"the fix command of {config.name} changed nothing{detail}")
    return targets


def _executable(root: str, path: str) -> bool:
    full = Path(root, path)
    return full.exists() and bool(full.stat().st_mode & 0o100)


async def _validate(
    plans: Plans, plan: Plan, resource: Resource, sandbox: Sandbox
) -> tuple[Plan, list[str]]:
    """Run the validations concerned by the plan's paths in the sandbox, wait,
    and name the required ones that failed."""
    loaded = plans.validation.configs.get(Path(resource.root))
    selected = [c for c in loaded.validations if c.applies_to_any(plan.paths)]
    if not selected:
        return plan, []
    started = plans.validation.runs.start(
        resource.id, Path(sandbox.root), selected, plan_id=plan.id
    )
    plan = plans.move(plan, validation_run_id=started.run_id)
    try:
        await _completion(plans, started.run_id, started.started_event_id)
    except asyncio.CancelledError:
        await asyncio.shield(plans.validation.runs.cancel(started.run_id))
        raise
    rows = plans.services.store.query(
        "SELECT body FROM validation_results WHERE run_id = ? ORDER BY id", (started.run_id,)
    )
    results = [ValidationResult.model_validate_json(row["body"]) for row in rows]
    return plan, [
        f"{r.validation} ({r.message or 'failed'})"
        for r in results
        if r.mode is ValidationMode.REQUIRED and not r.passed
    ]


async def _completion(plans: Plans, run_id: str, started_event_id: int) -> None:
    stream = plans.services.events.subscribe(started_event_id)
    try:
        async for message in stream:
            params = message["params"]
            if message["method"] == "validation.completed" and params.get("run_id") == run_id:
                return
    finally:
        await stream.aclose()
