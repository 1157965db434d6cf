"""How an ``AcpClient`` reaches a backend: in-process or over HTTP + SSE."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

if TYPE_CHECKING:
    from acp_client.events import Event

TOKEN_ENV = "ACP_TOKEN"
"""Where a server's bearer token may come from; never passed on to a validator."""


class Transport(Protocol):
    """Carries JSON-compatible requests and raw event notifications.

    ``call`` returns the JSON-RPC ``result`` or raises an ``AcpError``
    subclass (``TransportError`` for outages, ``RemoteError`` for refusals).
    ``events`` yields JSON-RPC notification dicts (or, in process, typed
    events) with ``params.event_id`` greater than ``after``; it reconnects
    by itself where it can and raises ``StreamDropped`` only when it gives
    up. ``partial``: ask for partial results (``ValidationResultEvent.covered``);
    a backend that does not offer them sends whole ones, which a
    partial-aware client reads alike.
    """

    description: str

    async def call(self, method: str, params: Mapping[str, Any]) -> Any: ...

    def events(
        self, after: int | None = None, *, partial: bool = False
    ) -> AsyncIterator[dict[str, Any] | Event]: ...

    async def aclose(self) -> None: ...


class Facade(Protocol):
    """What an in-process backend offers; loaded by import path.

    ``dispatch`` takes a method name (aliases allowed) and JSON-compatible
    params, returns a JSON-compatible result, and raises
    ``acp_client.errors.RemoteError`` subclasses for refusals.
    ``subscribe`` yields event notifications after ``after`` (a
    ``stream.reset`` first when ``after`` is older than the retained log),
    then new ones as they happen, until the consumer stops iterating.
    A facade whose ``subscribe`` also takes ``partial`` (keyword) can send
    partial results to a subscriber that asks for them. A facade may also
    offer ``events(after, partial=...)``, the same stream as typed
    ``acp_client.events.Event`` objects (see ``TypedEvents``), and
    ``call_typed`` (``TypedCalls``): the in-process client then takes them
    as they are, with no copy.
    """

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any: ...

    def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]: ...

    async def aclose(self) -> None: ...


def subscribe(
    facade: Facade, after: int | None, partial: bool = False
) -> AsyncIterator[dict[str, Any] | Event]:
    """The facade's events: typed ones where it offers them (``TypedEvents``),
    else ``facade.subscribe``; with partial results when asked and offered."""
    if isinstance(facade, TypedEvents):
        return facade.events(after, partial=partial)
    if partial and "partial" in inspect.signature(facade.subscribe).parameters:
        events: AsyncIterator[dict[str, Any]] = cast(Any, facade).subscribe(after, partial=True)
        return events
    return facade.subscribe(after)


@runtime_checkable
class TypedCalls(Protocol):
    """A facade that answers a caller in this process with the operation's
    typed, frozen result object (``AcpClient`` takes it as it is) rather
    than JSON-compatible data to validate again."""

    async def call_typed(self, method: str, params: Mapping[str, Any] | None) -> Any: ...


@runtime_checkable
class TypedEvents(Protocol):
    """A facade that hands its events over as typed, frozen objects."""

    def events(
        self, after: int | None = None, *, partial: bool = False
    ) -> AsyncIterator[Event]: ...
