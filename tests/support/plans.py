"""Waiting for a plan through the backend facade."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from acp_backend.facade import BackendFacade
from acp_client.models import Plan, PlanState

WORKING = (PlanState.QUEUED, PlanState.PROCESSING)


async def settled(facade: BackendFacade, plan_id: str) -> Plan:
    """The plan once it stops being queued or processing."""
    return await plan_when(facade, plan_id, lambda p: p.state not in WORKING)


async def plan_when(facade: BackendFacade, plan_id: str, test: Callable[[Plan], bool]) -> Plan:
    """The plan once ``test`` holds for it (30 s at most)."""
    async with asyncio.timeout(30):
        while True:
            plan = Plan.model_validate(await facade.dispatch("plan.get", {"plan_id": plan_id}))
            if test(plan):
                return plan
            await asyncio.sleep(0.05)
