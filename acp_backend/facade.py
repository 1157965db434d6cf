"""The backend's one entry point: ``dispatch(method, params)`` and events.

Both transports end here: the in-process one calls ``dispatch`` directly, the
HTTP server calls it per JSON-RPC request. The facade owns the protocol
rules (aliases, param validation, error shapes, result dumping); the
handlers in the service modules own the domain, each found through
``routes.ROUTES`` on its first call.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from acp_backend.eventlog import DEFAULT_RETENTION, EventLog
from acp_backend.partial_events import whole_results
from acp_backend.registry import Registry
from acp_backend.routes import AT_SERVE, AT_START, handler_for, hooks, load_all
from acp_backend.services import Services
from acp_backend.store import Store, limit_from_env
from acp_client.errors import (
    InternalError,
    InvalidParams,
    InvalidState,
    MethodNotFound,
    RemoteError,
)
from acp_client.events import Event
from acp_client.operations import OPERATIONS, Operation, Params, canonical_method
from acp_client.paths import default_data_dir

log = logging.getLogger(__name__)

RETENTION_ENV = "ACP_EVENT_RETENTION"


def parse_params(operation: Operation, params: Mapping[str, Any] | None) -> Params:
    """Validate ``params`` against the operation's model; InvalidParams names the field."""
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise InvalidParams(
            f"params of {operation.method} must be an object, not {type(params).__name__}"
        )
    try:
        return operation.params.model_validate(dict(params))
    except ValidationError as exc:
        problems = [
            {
                "field": ".".join(["params", *(str(part) for part in error["loc"])]),
                "message": error["msg"][:1].lower() + error["msg"][1:],
            }
            for error in exc.errors()
        ]
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise InvalidParams(
            f"{first['field']}: {first['message']}{more}", data={"errors": problems}
        ) from None


def _method_not_found(name: str, message: str) -> MethodNotFound:
    return MethodNotFound(
        message,
        remedy="acp.initialize lists the operations this backend implements",
        data={"method": name},
    )


class BackendFacade:
    """Implements ``acp_client.transport.Facade`` over a data dir."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._closed = False

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        return (await self.call_typed(method, params)).model_dump(mode="json")

    async def call_typed(self, method: str, params: Mapping[str, Any] | None) -> BaseModel:
        """``dispatch``'s result as the operation's own (frozen) object, for a
        caller in this process: 100,000 listed findings dumped to JSON types
        and validated again cost ~1 s of the event loop (``TypedCalls``)."""
        if self._closed:
            raise InvalidState("the backend is shut down", remedy="reconnect")
        name = canonical_method(method) if isinstance(method, str) else repr(method)
        operation = OPERATIONS.get(name)
        if operation is None:
            raise _method_not_found(name, f"unknown method {name!r}")
        handler = handler_for(name)
        if handler is None:
            # In the contract, but its backend side lands later: say so, fake nothing.
            raise _method_not_found(name, f"{name} is not implemented by this backend yet")
        parsed = parse_params(operation, params)
        try:
            result = await handler(self.services, parsed)
            if not isinstance(result, operation.result):
                raise TypeError(f"{name} handler returned {type(result).__name__}")
            return result
        except RemoteError:
            raise
        except Exception:
            log.exception("%s failed", name)  # the traceback stays in the log
            raise InternalError(
                f"internal error while handling {name}", remedy="see the backend's log"
            ) from None

    async def subscribe(
        self, after: int | None = None, *, partial: bool = False
    ) -> AsyncGenerator[dict[str, Any], None]:
        """``events`` as JSON-RPC notification dicts (the wire format)."""
        async with contextlib.aclosing(self.events(after, partial=partial)) as events:
            async for event in events:
                yield event.to_notification()

    def events(
        self, after: int | None = None, *, partial: bool = False
    ) -> AsyncGenerator[Event, None]:
        """Typed events, shared rather than copied; ``partial``: results of
        runs on some files as logged (ADR 0017), else their stored whole."""
        events = self.services.events.events(after)
        return events if partial else whole_results(self.services.store, events)

    def serving(self) -> None:
        """It is about to serve over HTTP (``acp-backend serve``): every
        handler is loaded, and the ``AT_SERVE`` hooks prepare what a
        local-mode backend makes on first use."""
        load_all()
        for hook in hooks(AT_SERVE):
            hook(self.services)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.services.events.close()
        await self.services.tasks.aclose()
        self.services.store.close()


def create_facade(
    data_dir: Path | None = None, *, event_retention: int | None = None
) -> BackendFacade:
    """The reference backend on ``data_dir`` (default: ``default_data_dir()``).

    ``event_retention`` (else ``$ACP_EVENT_RETENTION``, else 10 000) is how
    many of the newest events the log keeps for replay.
    """
    data_dir = data_dir if data_dir is not None else default_data_dir()
    retention = event_retention if event_retention is not None else _retention_from_env()
    store = Store(data_dir)
    events = EventLog(store, retention=retention)
    registry = Registry(store, events)
    services = Services(data_dir, store, registry, events)
    try:
        for hook in hooks(AT_START):
            hook(services)
    except BaseException:
        store.close()
        raise
    return BackendFacade(services)


def _retention_from_env() -> int:
    return limit_from_env(RETENTION_ENV, DEFAULT_RETENTION, "the number of events to keep")
