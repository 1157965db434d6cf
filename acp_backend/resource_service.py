"""``resource.*``: thin handlers over the registry."""

from __future__ import annotations

from acp_backend.context import BackendContext
from acp_backend.handlers import handles
from acp_client.models import Resource
from acp_client.operations import (
    ResourceListParams,
    ResourceListResult,
    ResourceRegisterParams,
    ResourceResolveParams,
    ResourceResolveResult,
    ResourceUnregisterParams,
)


@handles("resource.list")
async def list_resources(ctx: BackendContext, params: ResourceListParams) -> ResourceListResult:
    return ResourceListResult(resources=tuple(ctx.registry.resources()))


@handles("resource.register")
async def register(ctx: BackendContext, params: ResourceRegisterParams) -> Resource:
    return ctx.registry.register(params.path, params.name)


@handles("resource.unregister")
async def unregister(ctx: BackendContext, params: ResourceUnregisterParams) -> Resource:
    return ctx.registry.unregister(params.resource)


@handles("resource.resolve")
async def resolve(ctx: BackendContext, params: ResourceResolveParams) -> ResourceResolveResult:
    return ctx.registry.resolve(params.path)
