"""Identical concurrent requests share one backend call.

Fifty hovers on the same line while the backend thinks make one
``context.inspect``. Each waiter may be cancelled on its own (the editor's
``$/cancelRequest``); the shared call is cancelled only when the last waiter
has gone, so a cancel reaches the backend exactly when nobody wants the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


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
