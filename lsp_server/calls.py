"""Backend calls made from requests and hooks: what goes wrong is said once,
never raised at the editor (``BackendCalls``); identical concurrent requests
share one call (``SharedCalls``).

Fifty hovers on the same line while the backend thinks make one
``context.inspect``. Each waiter may be cancelled on its own (the editor's
``$/cancelRequest``); the shared call is cancelled only when the last waiter
has gone, so a cancel reaches the backend exactly when nobody wants the answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from acp_client.errors import AcpError, Forbidden, TransportError, Unsupported

if TYPE_CHECKING:
    from acp_client.client import AcpClient
    from lsp_server.backend import BackendLink
    from lsp_server.notices import Notices

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")


class BackendCalls:
    """How a feature or the session reaches the backend outside a request
    (a request uses the client its snapshot holds)."""

    def __init__(self, link: BackendLink, notices: Notices) -> None:
        self._link = link
        self._notices = notices

    @property
    def client(self) -> AcpClient | None:
        """The client connected now (None during an outage)."""
        return self._link.client

    def check_moved(self) -> None:
        """Switch to a server that now serves the data dir, if one does
        (``BackendLink.check_moved``): asked on saves, never polled."""
        self._link.check_moved()

    async def guarded(self, call: Coroutine[Any, Any, T]) -> T | None:
        """The answer, or None: an outage is said once, an operation the
        backend lacks is said once, a refusal is logged."""
        try:
            return await call
        except TransportError as exc:
            self._notices.outage(exc)
        except Unsupported as exc:
            self._notices.degraded(exc.operation)
        except AcpError as exc:
            log.warning("ACP refused: %s", exc)
        return None

    async def if_allowed(self, operation: str, call: Coroutine[Any, Any, T]) -> T | None:
        """The answer, or None when the backend lacks ``operation`` or
        forbids it to this client (a multi-tenant server): that feature
        degrades, said once. Outages and other refusals propagate."""
        try:
            return await self.if_offered(call)
        except Forbidden as exc:
            self._notices.degraded(operation, exc)
            return None

    async def if_offered(self, call: Coroutine[Any, Any, T]) -> T | None:
        """The answer, or None when the backend lacks the operation (said
        once); outages and refusals propagate to the caller."""
        try:
            return await call
        except Unsupported as exc:
            self._notices.degraded(exc.operation)
            return None


@dataclass
class _Call(Generic[V]):
    task: asyncio.Task[V]
    waiters: int = field(default=0)


class SharedCalls(Generic[K, V]):
    def __init__(self) -> None:
        self._calls: dict[K, _Call[V]] = {}

    def __len__(self) -> int:
        return len(self._calls)

    async def run(self, key: K, make: Callable[[], Coroutine[Any, Any, V]]) -> V:
        """``make()``'s result, shared with every concurrent ``run`` of ``key``."""
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = _Call(asyncio.ensure_future(make()))
            call.task.add_done_callback(lambda _: self._forget(key, call))
        call.waiters += 1
        try:
            return await asyncio.shield(call.task)
        finally:
            call.waiters -= 1
            if call.waiters == 0 and not call.task.done():
                # The last waiter was cancelled: nobody wants the answer.
                self._forget(key, call)
                call.task.cancel()

    def _forget(self, key: K, call: _Call[V]) -> None:
        if self._calls.get(key) is call:
            del self._calls[key]
