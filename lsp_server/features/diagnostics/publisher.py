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
keys wait until the hold is released. Every ``max_hold`` seconds a tick
lets out the held keys not yet sent during the hold, so a long run's first
findings show within about a second. A key already sent during the hold
waits for the release, unless it is in view (an open document: sent at
every tick) or was sent ``max_stale`` ago. Ten validations over the same
10,000 files then send each file at most twice (its first findings, then
all of them), not once a tick with a growing set. What a tick lets out is
bounded by ``hold_share``: the keys in view, then others, a slice at a
time, until sending them has taken that share of the time to the next
tick (a tenth), timed as they go. The run's own work (in local mode, the
backend's) keeps the rest: sending 10,000 files early slowed the run it
reported on, only to send them again when it ended. (A count worked out
from a send's cost had to guess that cost at a run's first tick, before
any send was timed: 0.1 ms, where a file of a hundred findings takes
0.2 ms, and twice that on a loaded machine.)
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_WINDOW = 0.05
DEFAULT_MAX_HOLD = 1.0
DEFAULT_MAX_STALE = 10.0
DEFAULT_HOLD_SHARE = 0.1
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
        max_stale: float = DEFAULT_MAX_STALE,
        in_view: Callable[[K], bool] = lambda _: False,
        hold_share: float = DEFAULT_HOLD_SHARE,
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
        self._forgetting: asyncio.TimerHandle | None = None
        self._max_hold = max_hold
        self._max_stale = max_stale
        self._in_view = in_view
        self._hold_share = hold_share
        self._held: dict[K, None] | None = None  # insertion-ordered; None: not holding
        self._early: deque[K] = deque()  # held keys the last tick lets out while its share lasts
        self._early_left = 0.0  # seconds of that share not spent yet
        self._letting: asyncio.Handle | None = None
        self._sent_in_hold: dict[K, float] = {}  # when each key was let out of this hold
        self._tick: asyncio.TimerHandle | None = None

    def hold(self) -> None:
        """Keep changes back until ``release`` (see the module's docstring)."""
        if self._held is None:
            self._held = {}
            self._tick = asyncio.get_running_loop().call_later(self._max_hold, self._let_out)

    def release(self) -> None:
        """Send what was held back (as usual: coalesced, in slices)."""
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
        self._stop_letting_out()
        held, self._held = self._held, None
        self._sent_in_hold = {}
        for key in held or ():
            self._changed_now(key)

    def _let_out(self) -> None:
        """The bound, every ``max_hold``: the held keys in view go out, then
        those not sent during the hold (or last sent ``max_stale`` ago) for
        as long as ``hold_share`` of the time to the next tick allows."""
        assert self._held is not None
        loop = asyncio.get_running_loop()
        self._tick = loop.call_later(self._max_hold, self._let_out)
        now = self._clock()
        for key in [key for key in self._held if self._in_view(key)]:
            del self._held[key]
            self._sent_in_hold[key] = now
            self._changed_now(key)
        stale = now - self._max_stale  # a key never sent counts as sent this long ago
        sent = self._sent_in_hold
        self._early = deque(key for key in self._held if sent.get(key, stale) <= stale)
        self._early_left = self._hold_share * self._max_hold
        if self._early and self._letting is None:
            self._letting = loop.call_soon(self._let_out_slice)

    def _let_out_slice(self) -> None:
        """Send early keys for a slice of the tick's share, timed as they go."""
        self._letting = None
        loop = asyncio.get_running_loop()
        if self._backed_up():
            self._letting = loop.call_later(BACKED_UP_RETRY, self._let_out_slice)
            return
        now = self._clock()
        began = time.perf_counter()
        spent = 0.0
        while self._early and spent < min(self._early_left, self._slice_seconds):
            key = self._early.popleft()
            if self._held is not None and key in self._held:  # not let out another way since
                del self._held[key]
                self._sent_in_hold[key] = now
                self._publish(key, now)
            spent = time.perf_counter() - began
            if self._backed_up():
                break
        self._early_left -= spent
        if self._early and self._early_left > 0:
            self._letting = loop.call_soon(self._let_out_slice)
        else:
            self._early.clear()

    def _stop_letting_out(self) -> None:
        if self._letting is not None:
            self._letting.cancel()
            self._letting = None
        self._early.clear()

    def changed(self, key: K) -> None:
        self.changed_all((key,))

    def changed_all(self, keys: Iterable[K]) -> None:
        if self._held is not None:
            self._held.update(dict.fromkeys(keys))
        else:
            for key in keys:
                self._changed_now(key)

    def _changed_now(self, key: K) -> None:
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
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
        self._stop_letting_out()
        self._held = None
        self._sent_in_hold = {}
        for handle in self._trailing.values():
            handle.cancel()
        self._trailing.clear()
        self._due.clear()
        if self._draining is not None:
            self._draining.cancel()
            self._draining = None
        if self._forgetting is not None:
            self._forgetting.cancel()
            self._forgetting = None

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
        count = 0
        while self._due and count < self._slice:
            key = next(iter(self._due))
            del self._due[key]
            self._publish(key, now)
            count += 1
            if time.perf_counter() - began > self._slice_seconds or self._backed_up():
                break
        if self._due:
            self._draining = loop.call_soon(self._drain)
        elif self._forgetting is None:  # drained: forget the keys once their window is over
            self._forgetting = loop.call_later(self._window, self._forget)

    def _forget(self) -> None:
        self._forgetting = None
        self._prune(self._clock())

    def _prune(self, now: float) -> None:
        """Forget when keys were sent once their window is over: a burst's
        10,000 keys are not kept once it is out."""
        horizon = now - self._window
        self._last_sent = {k: t for k, t in self._last_sent.items() if t > horizon}
        self._prune_above = max(4096, 2 * len(self._last_sent))

    def _publish(self, key: K, now: float) -> None:
        self._last_sent[key] = now
        if len(self._last_sent) > self._prune_above:
            self._prune(now)
        self._send(key)
