"""ACP events: JSON-RPC notifications carrying a monotonically increasing id.

On the wire an event is ``{"jsonrpc": "2.0", "method": "validation.result",
"params": {"event_id": 42, "at": "...", ...}}``. Over SSE the same id is also
the SSE ``id`` field, so ``Last-Event-ID`` resumes exactly after it.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import Field, TypeAdapter, ValidationError, create_model

from acp_client.errors import ServerFault
from acp_client.models import Model, Plan, Resource, ValidationResult, ValidationSummary


class Event(Model):
    method: ClassVar[str]
    event_id: int = Field(ge=0)
    at: datetime

    def to_notification(self) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "method": self.method,
            "params": self.model_dump(mode="json"),
        }


class ValidationStarted(Event):
    method: ClassVar[str] = "validation.started"
    run_id: str
    resource_id: str
    plan_id: str | None = None
    validations: tuple[str, ...]


class ValidationResultEvent(Event):
    """A validator's result. With ``covered`` (only on a subscription that
    asked for partial results) ``result.findings`` are those of the covered
    files alone: merge them into result ``base_result_id`` (``acp_client.
    covered.merge_covered``) for the whole, which ``validation.list_results``
    also returns under the same result id."""

    method: ClassVar[str] = "validation.result"
    result: ValidationResult
    # Absent from a whole result's event: the wire is as before partial results.
    covered: tuple[str, ...] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Set on a partial result: the files (relative to the root) the run "
        "covered; the validation's findings in every other file are those of "
        "base_result_id.",
    )
    base_result_id: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Set on a partial result: the result it continues.",
    )


class ValidationCompleted(Event):
    method: ClassVar[str] = "validation.completed"
    run_id: str
    resource_id: str
    plan_id: str | None = None
    summary: ValidationSummary


class PlanChanged(Event):
    method: ClassVar[str] = "plan.changed"
    plan: Plan


class PlanApplied(Event):
    method: ClassVar[str] = "plan.applied"
    plan_id: str
    resource_id: str
    paths: tuple[str, ...] = Field(description="Every path written, created or removed.")
    forced: bool = False
    applied_by_client: bool = False


class ResourceChanged(Event):
    method: ClassVar[str] = "resource.changed"
    change: Literal["registered", "updated", "unregistered"]
    resource: Resource


class StreamReset(Event):
    """The server cannot replay from the id asked for: resync by listing.

    Its ``event_id`` is the id the stream continues after.
    """

    method: ClassVar[str] = "stream.reset"
    reason: str
    oldest_event_id: int | None = None


STALE_AFTER: tuple[type[Event], ...] = (
    ValidationResultEvent,
    PlanChanged,
    PlanApplied,
    ResourceChanged,
    StreamReset,
)
"""Events after which what a client learnt about a file (its findings, plans,
resource) may be out of date: caches of answers drop on them."""

EVENT_TYPES: dict[str, type[Event]] = {
    cls.method: cls
    for cls in (
        ValidationStarted,
        ValidationResultEvent,
        ValidationCompleted,
        PlanChanged,
        PlanApplied,
        ResourceChanged,
        StreamReset,
    )
}


def _notification_of(cls: type[Event]) -> type[Model]:
    """The JSON-RPC notification that carries a ``cls`` event."""
    method: Any = Literal[cls.method]  # types made at run time
    version: Any = Literal["2.0"]
    return create_model(
        f"{cls.__name__}Notification",
        __base__=Model,
        jsonrpc=(version, ...),
        method=(method, ...),
        params=(cls, ...),
    )


@functools.cache
def _notifications() -> TypeAdapter[Any]:
    """Any event's notification, told apart by ``method``: built on first use
    (~2 ms), which in local mode never comes; an event stream builds it as
    it connects (``prepare_reading``), not when its first event is due."""
    shape: Any = Annotated[
        Union[tuple(_notification_of(cls) for cls in EVENT_TYPES.values())],  # noqa: UP007
        Field(discriminator="method"),
    ]
    return TypeAdapter(shape)


def prepare_reading() -> None:
    """Build what ``read_event`` reads with, ahead of the first event."""
    _notifications()


def read_event(text: str | bytes) -> Event | None:
    """The typed event a notification's JSON text carries, read in one pass:
    pydantic reads the text itself, with no ``json.loads`` dict in between
    (a 10,000-finding result: ~20 ms, against ~32 ms for the dict and its
    validation). None for anything else (not JSON, an unknown method, a
    malformed event): ``json.loads`` and ``parse_event`` then say which."""
    try:
        event: Event = _notifications().validate_json(text).params
    except ValidationError:
        return None
    return event


class UnknownEvent(Exception):
    """A notification whose method this client does not know (newer backend)."""


def parse_event(message: object) -> Event:
    """Turn a JSON-RPC notification into its typed event.

    Raises ``UnknownEvent`` for a method we do not know (skip it) and
    ``ServerFault`` for anything malformed (log it and skip it). An event
    handed over already typed (an in-process backend) is taken as it is.
    """
    if isinstance(message, Event):
        return message
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise ServerFault(f"event is not a JSON-RPC 2.0 notification: {message!r:.200}")
    method = message.get("method")
    cls = EVENT_TYPES.get(method) if isinstance(method, str) else None
    if cls is None:
        raise UnknownEvent(str(method))
    try:
        return cls.model_validate(message.get("params"))
    except ValidationError as exc:
        raise ServerFault(f"malformed {method} event: {exc.errors()[0]['msg']}") from exc
