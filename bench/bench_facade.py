"""The reference backend plus a scripted event source, for the benchmarks.

Loaded by import path (``--facade bench.bench_facade:create_facade``) in the
process that hosts the backend: the language server itself in local mode,
``acp-backend serve`` over HTTP + SSE. Once the first subscriber has had
time to settle it publishes ``validation.result`` events through the real
event log, as a validator run would; each event's ``at`` is its birth time,
which the benchmark compares with the time the editor receives the result.

The script comes from ``$ACP_BENCH_PLAN`` (JSON): ``resource_id``, ``kind``
(``latency``: ``count`` one-finding results on distinct files, ``interval``
seconds apart; ``burst``: one result with ``findings`` findings spread over
``files`` files).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp_backend.facade import BackendFacade
from acp_backend.facade import create_facade as create_reference
from acp_client.events import ValidationResultEvent
from acp_client.models import Finding, Location, ValidationMode, ValidationResult

SETTLE = 1.0


def bench_result(resource_id: str, n: int, findings: list[Finding]) -> ValidationResult:
    now = datetime.now(UTC)
    return ValidationResult(
        id=f"bench-result-{n}",
        validation="bench",
        mode=ValidationMode.REQUIRED,
        passed=False,
        resource_id=resource_id,
        run_id=f"bench-run-{n}",
        started_at=now,
        finished_at=now,
        findings=tuple(findings),
    )


def finding(path: str, line: int, born: float) -> Finding:
    """A finding whose message carries its birth time (``time.time()``)."""
    location = Location(path=path, line=line, character=4)
    return Finding(location=location, message=f"finding {line} t={born:.6f}")


class ScriptedFacade:
    def __init__(self, inner: BackendFacade, plan: dict[str, Any]) -> None:
        self.inner = inner
        self.plan = plan
        self._task: asyncio.Task[None] | None = None

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        return await self.inner.dispatch(method, params)

    def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._play())
        return self.inner.subscribe(after)

    async def _play(self) -> None:
        await asyncio.sleep(SETTLE)
        publish = self.inner.context.events.publish
        resource_id = self.plan["resource_id"]
        if self.plan["kind"] == "latency":
            for n in range(self.plan["count"]):
                path = f"pkg/m{n % self.plan['files']:04d}.py"
                one = [finding(path, 1, time.time())]
                publish(ValidationResultEvent, result=bench_result(resource_id, n, one))
                await asyncio.sleep(self.plan["interval"])
        else:
            files, total = self.plan["files"], self.plan["findings"]
            born = time.time()
            findings = [finding(f"pkg/m{i % files:04d}.py", i // files, born) for i in range(total)]
            publish(ValidationResultEvent, result=bench_result(resource_id, 0, findings))

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await self.inner.aclose()


def create_facade(data_dir: Path | None = None) -> ScriptedFacade:
    return ScriptedFacade(create_reference(data_dir), json.loads(os.environ["ACP_BENCH_PLAN"]))
