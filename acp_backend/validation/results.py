"""``validation.list_results``: what is stored, read without loading the
validators' machinery (a read-only process never runs one; ADR 0032)."""

from __future__ import annotations

import asyncio

from acp_backend.services import Services
from acp_client.operations import ValidationListResultsParams, ValidationListResultsResult


async def list_results(
    services: Services, params: ValidationListResultsParams
) -> ValidationListResultsResult:
    resource = services.registry.get(params.resource)
    # On a thread: reading back 100,000 stored findings takes ~0.25 s.
    results, cursor = await asyncio.to_thread(
        services.store.latest_results,
        resource.id,
        params.plan,
        params.after,
        params.limit,
        params.history,
    )
    return ValidationListResultsResult(results=tuple(results), next_cursor=cursor)
