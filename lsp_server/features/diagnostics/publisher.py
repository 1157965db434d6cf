"""Coalescing: at most one publish per key per window, the last state always
out, and never a burst that holds the event loop.

A changed key is due at once if it was not sent within the window, else at
the window's end; due keys go out in slices of at most ``SLICE`` keys and
``SLICE_SECONDS`` of work, handing the loop back between slices so
requests are answered in the middle of a 100,000-finding burst (on a
loaded machine a count alone let a slice run for 50 ms). A key that
changes again while it waits is sent once, with whatever its state is by
then: the busier the burst, the more it collapses. While the editor has
not read what was sent (``backed_up``), draining waits: an answer to a
request is queued behind everything sent before it, so the queue is kept
short rather than the editor's pipe kept full.

While held (a run of several validations is in progress, ADR 0015), changed
keys wait until the hold is released or for at most ``max_hold`` seconds:
ten validations finishing one after another over the same files then send
each file about once, not ten times with a growing set.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_WINDOW = 0.05
DEFAULT_MAX_HOLD = 1.0
SLICE = 64
SLICE_SECONDS = 0.004
BACKED_UP_RETRY = 0.002  # seconds between looks at a backed-up editor


class CoalescingPublisher(Generic[K]):
    def __init__(
        self,
        send: Callable[[K], None],
        window: float = DEFAULT_WINDOW,
        clock: Callable[[], float] = time.monotonic,
        slice_size: int = SLICE,
        max_hold: float = DEFAULT_MAX_HOLD,
        *,
        slice_seconds: float = SLICE_SECONDS,
        backed_up: Callable[[], bool] = lambda: False,
    ) -> None:
        self._send = send
        self._window = window
        self._clock = clock
        self._slice = slice_size
        self._slice_seconds = slice_seconds
        self._backed_up = backed_up
        self._last_sent: dict[K, float] = {}
        self._trailing: dict[K, asyncio.TimerHandle] = {}
        self._due: dict[K, None] = {}  # insertion-ordered set
        self._draining: asyncio.Handle | None = None
        self._prune_above = 4096
        self._max_hold = max_hold
        self._held: dict[K, None] | None = None  # insertion-ordered; None: not holding
        self._hold_ends: asyncio.TimerHandle | None = None

    def hold(self) -> None:
        """Keep changes back until ``release`` (or ``max_hold`` has passed)."""
        if self._held is None:
            self._held = {}
            self._hold_ends = asyncio.get_running_loop().call_later(self._max_hold, self._expire)

    def release(self) -> None:
        """Send what was held back (as usual: coalesced, in slices)."""
        if self._hold_ends is not None:
            self._hold_ends.cancel()
            self._hold_ends = None
        held, self._held = self._held, None
        for key in held or ():
            self.changed(key)

    def _expire(self) -> None:
        """The bound: what waited ``max_hold`` goes out; holding goes on."""
        self._hold_ends = None
        self.release()
        self.hold()

    def changed(self, key: K) -> None:
        if self._held is not None:
            self._held[key] = None
            return
        if key in self._trailing or key in self._due:
            return  # the pending publish will carry this change too
        last = self._last_sent.get(key)
        wait = 0.0 if last is None else last + self._window - self._clock()
        if wait <= 0:
            self._make_due(key)
        else:
            loop = asyncio.get_running_loop()
            self._trailing[key] = loop.call_later(wait, self._trailing_due, key)

    def close(self) -> None:
        if self._hold_ends is not None:
            self._hold_ends.cancel()
            self._hold_ends = None
        self._held = None
        for handle in self._trailing.values():
            handle.cancel()
        self._trailing.clear()
        self._due.clear()
        if self._draining is not None:
            self._draining.cancel()
            self._draining = None

    def _trailing_due(self, key: K) -> None:
        del self._trailing[key]
        self._make_due(key)

    def _make_due(self, key: K) -> None:
        self._due[key] = None
        if self._draining is None:
            self._draining = asyncio.get_running_loop().call_soon(self._drain)

    def _drain(self) -> None:
        """Send one slice of due keys; come back for the rest after the loop
        has run whatever else is ready."""
        self._draining = None
        loop = asyncio.get_running_loop()
        if self._backed_up():
            self._draining = loop.call_later(BACKED_UP_RETRY, self._drain)
            return
        now = self._clock()
        began = time.perf_counter()  # work done, whatever clock windows use
        for _ in range(min(self._slice, len(self._due))):
            key = next(iter(self._due))
            del self._due[key]
            self._publish(key, now)
            if time.perf_counter() - began > self._slice_seconds or self._backed_up():
                break
        if self._due:
            self._draining = loop.call_soon(self._drain)

    def _publish(self, key: K, now: float) -> None:
        self._last_sent[key] = now
        if len(self._last_sent) > self._prune_above:  # forget keys whose window is over
            horizon = now - self._window
            self._last_sent = {k: t for k, t in self._last_sent.items() if t > horizon}
            self._prune_above = max(4096, 2 * len(self._last_sent))
        self._send(key)
