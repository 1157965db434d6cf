"""The plan's state machine: every move is stored (compare-and-set) and announced.

``Plans`` is the backend's one plan owner per process: it moves plans,
keeps the tasks of plans being executed, and closes sandboxes when a plan
ends (the registry forgets the root first, then the directory goes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp_backend.limits import plan_concurrency, sandbox_ttl_seconds
from acp_backend.plans.changes import same_change
from acp_backend.plans.records import PlanRecords
from acp_backend.plans.sandbox import disk_use, remove_sandbox
from acp_backend.services import Services
from acp_backend.validation.selection import select_validations
from acp_backend.validation.service import ValidationService
from acp_client.errors import InvalidState, NotFound
from acp_client.events import PlanChanged
from acp_client.models import (
    APPLIABLE_PLAN_STATES,
    OPEN_PLAN_STATES,
    TERMINAL_PLAN_STATES,
    FileChange,
    Plan,
    PlanState,
    Resource,
)
from acp_client.paths import is_within, real_path

log = logging.getLogger(__name__)


class Superseded(Exception):
    """The stored plan moved on (another process cancelled it): stop working on it."""


@dataclass(frozen=True)
class Swept:
    """What ``Plans.sweep`` cleared."""

    expired: tuple[str, ...] = ()  # plans whose sandbox outlived the TTL
    removed: tuple[str, ...] = ()  # sandbox directories no open plan owns
    freed_bytes: int = 0


class Plans:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.records = PlanRecords(services.store)
        self.tasks: dict[str, asyncio.Task[None]] = {}
        # Proposals beyond this many wait, queued, before making a sandbox.
        self.slots = asyncio.Semaphore(plan_concurrency())

    @property
    def validation(self) -> ValidationService:
        return self.services.service(ValidationService, ValidationService)

    def sandbox_dir(self, plan_id: str) -> Path:
        return self.services.data_dir / "sandboxes" / plan_id

    def insert(self, plan: Plan, changes: Sequence[FileChange] = (), *, worker: bool) -> Plan:
        self.records.insert(plan, changes, os.getpid() if worker else None)
        self.services.events.publish(PlanChanged, plan=plan)
        return plan

    def move(
        self,
        plan: Plan,
        expected: Collection[PlanState] = OPEN_PLAN_STATES,
        *,
        changes: Sequence[FileChange] | None = None,
        **updates: Any,
    ) -> Plan:
        """Store ``plan`` with ``updates`` if it is still in one of ``expected``
        and announce it; ``Superseded`` when it is not."""
        moved = plan.model_copy(update={**updates, "updated_at": datetime.now(UTC)})
        if not self.records.transition(moved, expected, changes):
            raise Superseded(plan.id)
        self.services.events.publish(PlanChanged, plan=moved)
        return moved

    def open_plan(self, plan_id: str, verb: str) -> Plan:
        plan = self.records.get(plan_id)
        if plan.state in TERMINAL_PLAN_STATES:
            raise InvalidState(
                f"plan {plan.id} is {plan.state}: it cannot be {verb}",
                remedy="list the open plans with: acp-backend plan list",
            )
        return plan

    async def close_sandbox(self, plan: Plan) -> None:
        """Stop the plan's sandbox validation run if it is still going, then close."""
        if plan.validation_run_id is not None:
            await asyncio.shield(self.validation.runs.cancel(plan.validation_run_id))
        await asyncio.to_thread(self.close_sandbox_now, plan)

    def close_sandbox_now(self, plan: Plan) -> None:
        """Forget the plan's sandbox roots, then remove its directory (idempotent)."""
        checkout = self.sandbox_dir(plan.id)
        with contextlib.suppress(NotFound):
            resource = self.services.registry.get(plan.resource_id)
            for root in resource.sandbox_roots:
                if is_within(root, real_path(str(checkout))) or root == plan.sandbox_root:
                    self.services.registry.remove_sandbox_root(resource.id, root)
        if checkout.exists():
            remove_sandbox(str(checkout))

    async def rerun(self, resource: Resource, paths: Sequence[str]) -> None:
        """Re-run on the resource the validations whose applies_to match ``paths``."""
        try:
            loaded = self.validation.configs.get(Path(resource.root))
            selected = select_validations(loaded, resource.root, None, tuple(paths))
        except InvalidState:
            return  # no (valid) acp.toml: nothing to re-run
        if selected:
            await self.validation.runs.start(resource.id, Path(resource.root), selected)

    async def cancel(self, plan_id: str) -> Plan:
        plan = self.open_plan(plan_id, "cancelled")
        if plan.state is PlanState.IN_EDITOR:
            raise InvalidState(
                f"plan {plan.id} is applied in an editor, not saved yet: it cannot be cancelled",
                remedy="undo it in the editor (or save to keep it)",
            )
        task = self.tasks.get(plan.id)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            plan = self.open_plan(plan_id, "cancelled")
        cancelled = self.move(
            plan, state=PlanState.CANCELLED, reason="cancelled by request", sandbox_root=None
        )
        await self.close_sandbox(plan)
        return cancelled

    async def supersede_twins(self, plan: Plan, changes: Sequence[FileChange]) -> None:
        """One plan per identical change: the resource's other plans that are
        ready to apply with exactly ``changes`` end cancelled, naming
        ``plan``, which replaces them, and their sandboxes go. Called before
        ``plan`` is announced ready, so two never are at once."""
        mine = same_change(changes)
        if not mine:
            return  # a plan that changes nothing is no one's twin
        for other in self.records.find(plan.resource_id, APPLIABLE_PLAN_STATES):
            if other.id == plan.id or same_change(self.records.changes(other.id)) != mine:
                continue
            try:
                self.move(
                    other,
                    APPLIABLE_PLAN_STATES,
                    state=PlanState.CANCELLED,
                    reason=f"superseded by plan {plan.id}, which makes the same change",
                    sandbox_root=None,
                )
            except Superseded:
                continue  # it moved on meanwhile (applied, cancelled)
            try:
                await self.close_sandbox(other)
            except OSError as exc:  # gc clears what is left; the plan stands
                log.warning("could not remove the sandbox of plan %s: %s", other.id, exc)

    def sweep(self, now: datetime | None = None) -> Swept:
        """Expire ready plans whose sandbox is older than the TTL (the plan
        becomes ``expired``, its sandbox goes), then remove every sandbox
        directory no open plan owns (a backend killed mid-proposal leaves
        one) and prune the git worktree entries they leave behind."""
        moment = now or datetime.now(UTC)
        ttl = sandbox_ttl_seconds()
        expired: list[str] = []
        for plan in self.records.find(None, APPLIABLE_PLAN_STATES):
            if plan.sandbox_root is None or (moment - plan.updated_at).total_seconds() < ttl:
                continue
            with contextlib.suppress(Superseded):
                self.move(
                    plan,
                    APPLIABLE_PLAN_STATES,
                    state=PlanState.EXPIRED,
                    reason=f"unapplied for {ttl / 3600:g} h: its sandbox was removed; "
                    "propose the fix again",
                    sandbox_root=None,
                )
                self.close_sandbox_now(plan)
                expired.append(plan.id)
        removed: list[str] = []
        freed = 0
        folder = self.services.data_dir / "sandboxes"
        for checkout in sorted(folder.iterdir()) if folder.is_dir() else ():
            if self._owned(checkout.name):
                continue
            freed += disk_use(checkout)
            with contextlib.suppress(NotFound):
                self.close_sandbox_now(self.records.get(checkout.name))
            if checkout.exists():
                remove_sandbox(str(checkout))
            removed.append(checkout.name)
        return Swept(tuple(expired), tuple(removed), freed)

    def _owned(self, plan_id: str) -> bool:
        try:
            return self.records.get(plan_id).state not in TERMINAL_PLAN_STATES
        except NotFound:
            return False

    def settle_orphans(self) -> None:
        """Plans whose worker process died mid-execution end as errored."""
        for plan in self.records.orphaned():
            with contextlib.suppress(Superseded):
                self.move(
                    plan,
                    state=PlanState.ERRORED,
                    reason="the backend stopped while the plan was being executed; propose again",
                    sandbox_root=None,
                )
                self.close_sandbox_now(plan)


def plans_of(services: Services) -> Plans:
    return services.service(Plans, Plans)
