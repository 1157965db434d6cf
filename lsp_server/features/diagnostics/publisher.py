"""Coalescing: at most one publish per key per window, the last state always out.

The first change to a key goes out at once (no added latency when things
are quiet); changes inside the window after it collapse into one trailing
publish at the window's end, which sends whatever the state is by then.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_WINDOW = 0.05


class CoalescingPublisher(Generic[K]):
    def __init__(
        self,
        send: Callable[[K], None],
        window: float = DEFAULT_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send = send
        self._window = window
        self._clock = clock
        self._last_sent: dict[K, float] = {}
        self._trailing: dict[K, asyncio.TimerHandle] = {}
        self._prune_above = 4096

    def changed(self, key: K) -> None:
        if key in self._trailing:
            return  # the trailing publish will carry this change too
        now = self._clock()
        last = self._last_sent.get(key)
        if last is None or now - last >= self._window:
            self._publish(key, now)
            return
        delay = last + self._window - now
        loop = asyncio.get_running_loop()
        self._trailing[key] = loop.call_later(delay, self._flush, key)

    def close(self) -> None:
        for handle in self._trailing.values():
            handle.cancel()
        self._trailing.clear()

    def _flush(self, key: K) -> None:
        del self._trailing[key]
        self._publish(key, self._clock())

    def _publish(self, key: K, now: float) -> None:
        self._last_sent[key] = now
        if len(self._last_sent) > self._prune_above:  # forget keys whose window is over
            horizon = now - self._window
            self._last_sent = {k: t for k, t in self._last_sent.items() if t > horizon}
            self._prune_above = max(4096, 2 * len(self._last_sent))
        self._send(key)
