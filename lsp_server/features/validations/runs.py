"""When the server asks for validation runs: at once on save, debounced on change.

Debouncing is per resource: edits to several files of one resource within
the quiet time become one run naming all of them; each edit restarts the
wait. The backend picks the validators whose ``applies_to`` match the paths
and cancels an older run of the same validators.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

StartRun = Callable[[str, frozenset[str]], Coroutine[Any, Any, None]]


class RunScheduler:
    def __init__(
        self, start: StartRun, spawn: Callable[[Coroutine[Any, Any, None]], object]
    ) -> None:
        self._start = start
        self._spawn = spawn
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._paths: dict[str, set[str]] = {}

    async def now(self, resource_id: str, paths: frozenset[str]) -> None:
        await self._start(resource_id, paths)

    def later(self, resource_id: str, path: str, delay: float) -> None:
        self._paths.setdefault(resource_id, set()).add(path)
        pending = self._timers.pop(resource_id, None)
        if pending is not None:
            pending.cancel()
        loop = asyncio.get_running_loop()
        self._timers[resource_id] = loop.call_later(delay, self._fire, resource_id)

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._paths.clear()

    def _fire(self, resource_id: str) -> None:
        del self._timers[resource_id]
        self._spawn(self._start(resource_id, frozenset(self._paths.pop(resource_id))))
