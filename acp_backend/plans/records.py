"""Plans in the store: the plan, its change set, and the lines it changed once applied.

A state change is a compare-and-set on the stored state, so two processes
sharing a data dir (an editor's embedded backend, a CLI) never both move a
plan: the loser sees ``False`` and stops.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from acp_backend.store import Store
from acp_client.errors import InvalidState, NotFound
from acp_client.models import WORKING_PLAN_STATES, FileChange, Plan, PlanState

if TYPE_CHECKING:  # a backend that only starts up (and reads) never loads the diffing
    from acp_backend.plans.text import LineRange


class PlanRecords:
    def __init__(self, store: Store) -> None:
        self._store = store

    def insert(self, plan: Plan, changes: Sequence[FileChange], worker_pid: int | None) -> None:
        with self._store.write() as conn:
            conn.execute(
                "INSERT INTO plans (id, resource_id, state, worker_pid, body, changes)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    plan.id,
                    plan.resource_id,
                    str(plan.state),
                    worker_pid,
                    plan.model_dump_json(),
                    _dump_changes(changes),
                ),
            )

    def get(self, plan_id: str) -> Plan:
        rows = self._store.query("SELECT body FROM plans WHERE id = ?", (plan_id,))
        if not rows:
            raise NotFound(f"no plan {plan_id!r}", remedy="list them with: acp-backend plan list")
        return Plan.model_validate_json(rows[0]["body"])

    def changes(self, plan_id: str) -> list[FileChange]:
        rows = self._store.query("SELECT changes FROM plans WHERE id = ?", (plan_id,))
        if not rows:
            raise NotFound(f"no plan {plan_id!r}")
        return [FileChange.model_validate(item) for item in json.loads(rows[0]["changes"])]

    def transition(
        self,
        plan: Plan,
        expected: Collection[PlanState],
        changes: Sequence[FileChange] | None = None,
        applied_lines: Mapping[str, Sequence[LineRange]] | None = None,
    ) -> bool:
        """Store ``plan`` if its stored state is still one of ``expected``
        (with its change set and applied lines, when given); False otherwise."""
        states = tuple(str(state) for state in expected)
        at = plan.updated_at.isoformat()
        marks = ", ".join("?" * len(states))
        with self._store.write() as conn:
            updated = conn.execute(
                f"UPDATE plans SET state = ?, body = ?, changes = coalesce(?, changes)"
                f" WHERE id = ? AND state IN ({marks})",
                (
                    str(plan.state),
                    plan.model_dump_json(),
                    None if changes is None else _dump_changes(changes),
                    plan.id,
                    *states,
                ),
            ).rowcount
            if updated and applied_lines:
                conn.executemany(
                    "INSERT INTO plan_applied_lines (plan_id, resource_id, path, start_line,"
                    " end_line, applied_at) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (plan.id, plan.resource_id, path, r.start, r.end, at)
                        for path, ranges in applied_lines.items()
                        for r in ranges
                    ],
                )
        return bool(updated)

    def forget_applied_lines(self, plan_id: str) -> None:
        """A plan applied in an editor and undone there: it changed no line."""
        with self._store.write() as conn:
            conn.execute("DELETE FROM plan_applied_lines WHERE plan_id = ?", (plan_id,))

    def find(
        self, resource_id: str | None = None, states: Iterable[PlanState] | None = None
    ) -> list[Plan]:
        where, params = ["1 = 1"], []
        if resource_id is not None:
            where.append("resource_id = ?")
            params.append(resource_id)
        if states is not None:
            wanted = [str(state) for state in states]
            where.append(f"state IN ({', '.join('?' * len(wanted))})")
            params += wanted
        rows = self._store.query(
            f"SELECT body FROM plans WHERE {' AND '.join(where)} ORDER BY id", params
        )
        return [Plan.model_validate_json(row["body"]) for row in rows]

    def orphaned(self) -> list[Plan]:
        """Plans still queued or processing whose worker process is gone."""
        working = tuple(str(state) for state in WORKING_PLAN_STATES)
        rows = self._store.query(
            f"SELECT body, worker_pid FROM plans WHERE state IN ({', '.join('?' * len(working))})",
            working,
        )
        return [
            Plan.model_validate_json(row["body"])
            for row in rows
            if row["worker_pid"] is None or not _alive(row["worker_pid"])
        ]


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _dump_changes(changes: Sequence[FileChange]) -> str:
    return json.dumps([change.model_dump(mode="json") for change in changes])


@dataclass(frozen=True)
class AppliedLines:
    """Lines ``start_line``..``end_line`` (0-based, end exclusive; equal when the
    plan removed lines just before ``start_line``) of ``path`` as ``plan`` left them."""

    plan: Plan
    path: str
    start_line: int
    end_line: int
    applied_at: datetime


def applied_lines(store: Store, resource_id: str, path: str) -> list[AppliedLines]:
    """Every applied plan's recorded lines of ``path`` (relative to the
    resource root), newest first. Line numbers are those of the file right
    after each apply; ``acp_backend.inspect.provenance`` follows them through
    later edits."""
    rows = store.query(
        "SELECT l.path, l.start_line, l.end_line, l.applied_at, p.body"
        " FROM plan_applied_lines AS l JOIN plans AS p ON p.id = l.plan_id"
        " WHERE l.resource_id = ? AND l.path = ?"
        " ORDER BY l.applied_at DESC, l.plan_id DESC, l.start_line",
        (resource_id, path),
    )
    return [
        AppliedLines(
            plan=Plan.model_validate_json(row["body"]),
            path=row["path"],
            start_line=row["start_line"],
            end_line=row["end_line"],
            applied_at=datetime.fromisoformat(row["applied_at"]),
        )
        for row in rows
    ]


def plans_touching(store: Store, resource_id: str, path: str, line: int) -> list[AppliedLines]:
    """Applied plans whose change set produced (or removed lines at) ``line`` of
    ``path``, newest first: provenance as recorded, not followed through edits."""
    return [
        applied
        for applied in applied_lines(store, resource_id, path)
        if applied.start_line <= line < max(applied.end_line, applied.start_line + 1)
    ]


def sandbox_root_of(store: Store, plan_id: str, resource_id: str) -> str:
    """The root of a plan's sandbox (``validation.run`` with ``plan``)."""
    plan = PlanRecords(store).get(plan_id)
    if plan.resource_id != resource_id:
        raise NotFound(f"plan {plan_id} is not a plan of that resource")
    if plan.sandbox_root is None:
        raise InvalidState(
            f"plan {plan_id} has no sandbox ({plan.state})",
            remedy="only a proposed fix that is complete or constrained has one",
        )
    return plan.sandbox_root
