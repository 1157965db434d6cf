"""Waiting for what a mutating call set off: the validation runs it started.

``plan.apply`` re-runs the affected validations before it answers, so their
``validation.started`` events are in the log by then. A short-lived client
(a CLI hosting the backend in its own process, which would cancel the runs
on exit) waits for them with ``follow_runs``.
"""

from __future__ import annotations

from acp_client.client import AcpClient
from acp_client.events import ValidationCompleted, ValidationStarted


async def follow_runs(
    client: AcpClient, after: int | None, resource_id: str
) -> list[ValidationCompleted]:
    """The completions of the runs on ``resource_id`` itself (not a plan's
    sandbox) started after event ``after`` and before this call, once all ended.

    Runs started after the call are not waited for.
    """
    head = await client.last_event_id() or 0
    pending: set[str] = set()
    done: list[ValidationCompleted] = []
    async for event in client.events(after or 0):
        if isinstance(event, ValidationStarted) and event.event_id <= head:
            if event.resource_id == resource_id and event.plan_id is None:
                pending.add(event.run_id)
        elif isinstance(event, ValidationCompleted) and event.run_id in pending:
            pending.discard(event.run_id)
            done.append(event)
        if event.event_id >= head and not pending:
            break
    return done
