"""Polling until a condition holds: in a test's event loop, and blocking."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(
    condition: Callable[[], bool], seconds: float = 10.0, message: str = "timed out waiting"
) -> None:
    """Return once ``condition()`` holds (checked every 20 ms); fail with
    ``message`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, message
        await asyncio.sleep(0.02)


def wait_until(
    condition: Callable[[], bool], seconds: float = 10.0, message: str = "timed out waiting"
) -> None:
    """``until`` for code outside an event loop (checked every 50 ms)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, message
        time.sleep(0.05)
