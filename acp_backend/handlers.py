"""The handler registry: service modules declare which operation they answer.

    @handles("resource.list")
    async def list_resources(services: Services, params: ResourceListParams) -> ...:

A handler receives params already validated against the operation's Params
model and returns the operation's Result model; the facade does the rest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from acp_backend.services import Services
from acp_client.operations import OPERATIONS

Handler = Callable[[Services, Any], Awaitable[BaseModel]]
H = TypeVar("H", bound=Handler)

HANDLERS: dict[str, Handler] = {}


def handles(method: str) -> Callable[[H], H]:
    if method not in OPERATIONS:
        raise ValueError(f"{method!r} is not an ACP operation")

    def register(handler: H) -> H:
        if method in HANDLERS:
            raise ValueError(f"{method} already has a handler: {HANDLERS[method].__qualname__}")
        HANDLERS[method] = handler
        return handler

    return register


Startup = Callable[[Services], None]
STARTUP: list[Startup] = []


def on_start(hook: Startup) -> Startup:
    """Run ``hook`` when a backend opens its data dir (e.g. to finish what a
    crash interrupted), before it answers anything."""
    STARTUP.append(hook)
    return hook


SERVING: list[Startup] = []


def on_serve(hook: Startup) -> Startup:
    """Run ``hook`` when a backend starts serving over HTTP, before its first
    request: a long-lived server makes now what the first requests would
    otherwise wait for, rather than in the middle of a burst of them."""
    SERVING.append(hook)
    return hook
