"""SharedCalls: one call for concurrent identical requests, cancelled with the last waiter."""

from __future__ import annotations

import asyncio

import pytest

from lsp_server.calls import SharedCalls


class Backend:
    def __init__(self) -> None:
        self.calls = 0
        self.cancelled = 0
        self.release = asyncio.Event()

    async def answer(self, value: str) -> str:
        self.calls += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return value


async def test_fifty_concurrent_identical_requests_make_one_call() -> None:
    shared: SharedCalls[str, str] = SharedCalls()
    backend = Backend()
    waiters = [
        asyncio.ensure_future(shared.run("k", lambda: backend.answer("v"))) for _ in range(50)
    ]
    await asyncio.sleep(0)
    backend.release.set()
    assert await asyncio.gather(*waiters) == ["v"] * 50
    assert backend.calls == 1 and len(shared) == 0


async def test_different_keys_make_different_calls() -> None:
    shared: SharedCalls[str, str] = SharedCalls()
    backend = Backend()
    backend.release.set()
    assert await asyncio.gather(
        shared.run("a", lambda: backend.answer("A")), shared.run("b", lambda: backend.answer("B"))
    ) == ["A", "B"]
    assert backend.calls == 2


async def test_one_waiter_cancelled_leaves_the_call_to_the_others() -> None:
    shared: SharedCalls[str, str] = SharedCalls()
    backend = Backend()
    first = asyncio.ensure_future(shared.run("k", lambda: backend.answer("v")))
    second = asyncio.ensure_future(shared.run("k", lambda: backend.answer("v")))
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.sleep(0)
    assert backend.cancelled == 0
    backend.release.set()
    assert await second == "v"
    assert first.cancelled()


async def test_the_last_waiter_cancelled_cancels_the_call() -> None:
    shared: SharedCalls[str, str] = SharedCalls()
    backend = Backend()
    waiters = [
        asyncio.ensure_future(shared.run("k", lambda: backend.answer("v"))) for _ in range(3)
    ]
    await asyncio.sleep(0)
    for waiter in waiters:
        waiter.cancel()
    await asyncio.gather(*waiters, return_exceptions=True)
    await asyncio.sleep(0)
    assert backend.cancelled == 1 and len(shared) == 0
    # A request right after starts afresh rather than joining the cancelled call.
    backend.release.set()
    assert await shared.run("k", lambda: backend.answer("again")) == "again"
    assert backend.calls == 2


async def test_a_failure_reaches_every_waiter_and_is_not_kept() -> None:
    shared: SharedCalls[str, str] = SharedCalls()

    async def broken() -> str:
        await asyncio.sleep(0)
        raise RuntimeError("down")

    results = await asyncio.gather(
        shared.run("k", broken), shared.run("k", broken), return_exceptions=True
    )
    assert [str(r) for r in results] == ["down", "down"]
    assert len(shared) == 0
    with pytest.raises(RuntimeError):
        await shared.run("k", broken)
