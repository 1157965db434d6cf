"""Ending a command cleanly on SIGTERM and SIGHUP.

By default those signals end a process at once, without its ``finally``
blocks: an in-process backend would leave its validators running (they
lead sessions of their own, so the terminal's hang-up does not reach
them). ``run_until_terminated`` turns the signal into a cancellation of the
command's main coroutine, so its cleanup runs (the backend closes, its
validators' process groups are killed), then raises ``Terminated``.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# SIGINT stays with asyncio.run, which already turns it into KeyboardInterrupt.
TERMINATING: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class Terminated(Exception):
    """The command was ended by ``signum`` after cleaning up."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def status(self) -> int:
        """The shell's convention for a process ended by a signal."""
        return 128 + self.signum


def run_until_terminated(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGTERM or SIGHUP cancels ``main`` and
    raises ``Terminated`` once it has unwound."""
    return asyncio.run(_guarded(main))


async def _guarded(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[int] = []

    def on_signal(signum: int) -> None:
        if not received:
            task.cancel()
        received.append(signum)

    installed = []
    for signum in TERMINATING:
        try:
            loop.add_signal_handler(signum, on_signal, signum)
        except (NotImplementedError, RuntimeError):  # Windows, or not the main thread
            continue
        installed.append(signum)
    try:
        return await main
    except asyncio.CancelledError:
        if received:
            raise Terminated(received[0]) from None
        raise
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
