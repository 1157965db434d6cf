"""``Kit``: what every check gets: the options, one event loop, the backend's
wire, the scratch resource, and helpers that speak ACP through them."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from acp_conformance import schema
from acp_conformance.options import KitOptions
from acp_conformance.scratch import VALIDATIONS, Scratch
from acp_conformance.wire import HttpWire, Message, Wire, collect

T = TypeVar("T")


class CallFailed(AssertionError):
    """A call the check relies on was refused."""


@dataclass
class Kit:
    options: KitOptions
    runner: asyncio.Runner
    wire: Wire
    data_dir: Path
    scratch: Scratch
    backend_root: str
    operations: frozenset[str]
    last_event_id: int

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.runner.run(coroutine)

    @property
    def http(self) -> HttpWire | None:
        return self.wire if isinstance(self.wire, HttpWire) else None

    def serves(self, *methods: str) -> bool:
        return all(method in self.operations for method in methods)

    def path(self, name: str) -> str:
        """A scratch file's absolute path as the backend sees it."""
        return str(Path(self.backend_root) / name)

    async def result(self, method: str, params: dict[str, Any]) -> Any:
        """``method``'s result, checked against the schema; refusals fail the check."""
        answer = await self.wire.call(method, params)
        if "result" not in answer:
            raise CallFailed(f"{method} {params} was refused: {answer.get('error')}")
        found = schema.problems(answer["result"], schema.methods()[method]["result"])
        if found:
            raise CallFailed(f"{method} result breaks the schema: {'; '.join(found[:3])}")
        return answer["result"]

    async def run_validations(
        self, names: tuple[str, ...] = VALIDATIONS, after: int | None = None
    ) -> tuple[str, list[Message]]:
        """Start a run and collect every event after ``after`` (default: the
        run's ``started_event_id - 1``) until the run's ``validation.completed``."""
        started = await self.result(
            "validation.run", {"resource": self.scratch.id, "validations": list(names)}
        )
        run_id = started["run_id"]
        if after is None:
            first = started.get("started_event_id")
            after = first - 1 if isinstance(first, int) else self.last_event_id

        def completed(events: list[Message]) -> bool:
            last = events[-1]
            return last.get("method") == "validation.completed" and (
                last.get("params", {}).get("run_id") == run_id
            )

        events = await collect(self.wire, after, completed, self.options.timeout)
        if not events or not completed(events):
            raise AssertionError(
                f"no validation.completed for run {run_id} within {self.options.timeout:g} s "
                f"({len(events)} events came)"
            )
        return run_id, events
