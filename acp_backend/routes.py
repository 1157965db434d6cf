"""Which function answers each ACP operation, and what a backend runs when it
opens its data dir and when it starts serving over HTTP.

Every entry names its function by import path, imported on first use: a
process that only reads stored results (``acp-lsp check --no-run``, 0.25 s
in all) spent ~40 ms loading the validators' machinery, the plans' and the
code inspection when every service was imported up front (ADR 0032). This
table is the one list of what the backend implements: ``acp.initialize``
reports its keys, and an operation of the contract missing here is one
"not implemented by this backend yet".

A handler receives params already validated against the operation's
``Params`` model and returns its result model; the facade does the rest.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Awaitable, Callable
from typing import Any, cast

from pydantic import BaseModel

from acp_backend.services import Services

Handler = Callable[[Services, Any], Awaitable[BaseModel]]
Hook = Callable[[Services], None]

ROUTES: dict[str, str] = {
    "acp.initialize": "acp_backend.protocol_service:initialize",
    "resource.list": "acp_backend.resource_service:list_resources",
    "resource.register": "acp_backend.resource_service:register",
    "resource.unregister": "acp_backend.resource_service:unregister",
    "resource.resolve": "acp_backend.resource_service:resolve",
    "validation.list": "acp_backend.validation.service:list_validations",
    "validation.schema": "acp_backend.validation.service:schema",
    "validation.run": "acp_backend.validation.service:run",
    "validation.cancel": "acp_backend.validation.service:cancel",
    "validation.list_results": "acp_backend.validation.results:list_results",
    "plan.list": "acp_backend.plans.service:list_plans",
    "plan.get": "acp_backend.plans.service:get",
    "plan.create": "acp_backend.plans.service:create",
    "plan.execute": "acp_backend.plans.service:propose",
    "plan.preview": "acp_backend.plans.service:preview",
    "plan.apply": "acp_backend.plans.service:apply",
    "plan.settle": "acp_backend.plans.service:settle_in_editor",
    "plan.cancel": "acp_backend.plans.service:cancel",
    "context.inspect": "acp_backend.inspect.service:inspect",
}

AT_START: tuple[str, ...] = ("acp_backend.plans.recovery:settle",)
"""Run when a backend opens its data dir, before it answers anything: to
finish what a crash interrupted."""

AT_SERVE: tuple[str, ...] = ("acp_backend.validation.service:prepare",)
"""Run when a backend starts serving over HTTP, before its first request: a
long-lived server makes now what the first requests would otherwise wait
for, rather than in the middle of a burst of them. It also loads every
handler, so that no request pays for an import."""


@functools.cache
def resolve(target: str) -> Any:
    """The function ``"package.module:name"`` names (imported once)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def handler_for(method: str) -> Handler | None:
    target = ROUTES.get(method)
    return None if target is None else cast(Handler, resolve(target))


def hooks(targets: tuple[str, ...]) -> list[Hook]:
    return [cast(Hook, resolve(target)) for target in targets]


def load_all() -> None:
    for target in ROUTES.values():
        resolve(target)
