"""What the session asks the backend about one resource, in one go.

A resync (and the first document placed in a resource) lists everything the
editor shows of a resource: its latest results, its declarations (and
whether its ``acp.toml`` is broken), what an ``acp.toml`` may declare there
(``validation.schema``: completion and key docs), its plans, and the
results of each plan that still has a sandbox. The session takes the answer in as one change
(``Session.take_listing``); an event that arrived meanwhile is newer than
the listing and wins (``since``, ``tick``).
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from acp_client.client import AcpClient
from acp_client.errors import RemoteError, ServerFault
from acp_client.models import Plan, Resource, ValidationResult
from acp_client.operations import ValidationListResult, ValidationSchemaResult
from lsp_server.calls import BackendCalls

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Listing:
    resource: Resource
    since: int  # the result store's clock when the listing began
    tick: int  # the session's event count when the listing began
    results: tuple[ValidationResult, ...] | None = None  # None: not answered
    declarations: ValidationListResult | None = None
    schema: ValidationSchemaResult | None = None
    plans: tuple[Plan, ...] | None = None
    plan_results: Mapping[str, tuple[ValidationResult, ...]] = field(default_factory=dict)


async def list_resource(
    calls: BackendCalls, client: AcpClient, resource: Resource, since: int, tick: int
) -> Listing:
    """Everything shown of ``resource``. A refusal of one part (or a stored
    result this client cannot read) leaves that part out, logged: the rest
    still shows. Outages propagate."""
    results = await _part(client.latest_results(resource.id), "results", resource)
    declarations = await _part(
        calls.if_offered(client.validation_list(resource.id)), "validations", resource
    )
    schema = await _part(
        calls.if_offered(client.validation_schema(resource.id)), "acp.toml schema", resource
    )
    plans = await _part(calls.if_offered(client.plan_list(resource.id)), "plans", resource)
    plan_results: dict[str, tuple[ValidationResult, ...]] = {}
    for plan in plans or ():
        if plan.sandbox_root is not None:
            found = await _part(
                client.latest_results(resource.id, plan=plan.id), "plan results", resource
            )
            if found is not None:
                plan_results[plan.id] = tuple(found)
    return Listing(
        resource,
        since,
        tick,
        None if results is None else tuple(results),
        declarations,
        schema,
        None if plans is None else tuple(plans),
        plan_results,
    )


async def _part(call: Coroutine[Any, Any, T], what: str, resource: Resource) -> T | None:
    try:
        return await call
    except (RemoteError, ServerFault) as exc:
        log.warning("cannot list the %s of %s: %s", what, resource.name, exc)
        return None
