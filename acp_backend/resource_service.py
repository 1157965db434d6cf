"""``resource.*``: thin handlers over the registry."""

from __future__ import annotations

from acp_backend.services import Services
from acp_client.models import Resource
from acp_client.operations import (
    ResourceListParams,
    ResourceListResult,
    ResourceRegisterParams,
    ResourceResolveParams,
    ResourceResolveResult,
    ResourceUnregisterParams,
)


async def list_resources(services: Services, params: ResourceListParams) -> ResourceListResult:
    return ResourceListResult(resources=tuple(services.registry.resources()))


async def register(services: Services, params: ResourceRegisterParams) -> Resource:
    return services.registry.register(params.path, params.name)


async def unregister(services: Services, params: ResourceUnregisterParams) -> Resource:
    return services.registry.unregister(params.resource)


async def resolve(services: Services, params: ResourceResolveParams) -> ResourceResolveResult:
    return services.registry.resolve(params.path)
