import asyncio
from typing import Any

from lsp_server.features.validations.runs import RunScheduler


class Recorder:
    def __init__(self) -> None:
        self.runs: list[tuple[str, frozenset[str]]] = []
        self.tasks: set[asyncio.Task[Any]] = set()

    async def start(self, resource_id: str, paths: frozenset[str]) -> None:
        self.runs.append((resource_id, paths))

    def spawn(self, coroutine: Any) -> None:
        self.tasks.add(asyncio.ensure_future(coroutine))


async def test_save_runs_at_once() -> None:
    recorder = Recorder()
    await RunScheduler(recorder.start, recorder.spawn).now("R", frozenset({"a.py"}))
    assert recorder.runs == [("R", frozenset({"a.py"}))]


async def test_changes_are_debounced_per_resource_into_one_run() -> None:
    recorder = Recorder()
    scheduler = RunScheduler(recorder.start, recorder.spawn)
    for _ in range(5):
        scheduler.later("R", "a.py", 0.05)
        await asyncio.sleep(0.01)
    scheduler.later("R", "b.py", 0.05)
    scheduler.later("S", "c.py", 0.05)
    assert recorder.runs == []
    await asyncio.sleep(0.1)
    assert sorted(recorder.runs) == [("R", frozenset({"a.py", "b.py"})), ("S", frozenset({"c.py"}))]


async def test_close_drops_pending_runs() -> None:
    recorder = Recorder()
    scheduler = RunScheduler(recorder.start, recorder.spawn)
    scheduler.later("R", "a.py", 0.02)
    scheduler.close()
    await asyncio.sleep(0.05)
    assert recorder.runs == []
