"""How an event stream survives outages: a plain value, importable without
the HTTP client (local mode builds one and never loads httpx)."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class StreamPolicy:
    """How an event stream survives outages.

    After ``max_attempts`` consecutive failed connections the stream gives up
    with ``StreamDropped`` (``None``: it never gives up). A connection is
    healthy, and resets the count, when it delivered an event or stayed up
    for a whole silence window; one that fails or ends sooner counts.
    A stream that has no position yet (subscribed with ``after=None`` and
    no event seen) gives up at its first loss: it could only resume "from
    now", silently skipping what happened in between.
    """

    keepalive_interval: float = 15.0
    silence_factor: float = 3.0
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    max_attempts: int | None = 10

    @property
    def silence_timeout(self) -> float:
        return self.keepalive_interval * self.silence_factor

    def backoff(self, failures: int) -> float:
        """Exponential in ``failures``, capped, with jitter so clients spread out."""
        ceiling = min(self.backoff_max, self.backoff_initial * 2.0**failures)
        return random.uniform(ceiling / 2, ceiling)
