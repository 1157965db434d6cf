"""The reference backend, with every method the server calls written down.

Loaded by the server under test through ``--facade`` (local mode loads its
backend by import path), so the record is of what really crossed the wire.
The gated variant also holds the server's connection until the test opens it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from acp_backend.facade import BackendFacade
from acp_backend.facade import create_facade as create_reference
from acp_client.errors import MethodNotFound, StreamDropped
from acp_client.operations import canonical_method

CALLS_FILE = "calls.jsonl"
GATE_FILE = "initialize.gate"
INSPECT_GATE_FILE = "inspect.gate"


class RecordingFacade:
    def __init__(self, inner: BackendFacade, record: Path) -> None:
        self.inner = inner
        self.record = record

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        write_call(self.record, method, params)
        return await self.inner.dispatch(method, params)

    def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        return self.inner.subscribe(after)

    async def aclose(self) -> None:
        await self.inner.aclose()


class GatedFacade(RecordingFacade):
    """Answers ``acp.initialize`` only once the test calls ``open_gate``: the
    server under test stays not yet connected for as long as the test needs."""

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        if method == "acp.initialize":
            # Opened by the test process: a file, polled (no Event across processes).
            while not (self.record.parent / GATE_FILE).exists():  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        return await super().dispatch(method, params)


class HeldInspectFacade(RecordingFacade):
    """Holds every ``context.inspect`` until the test calls ``release_inspect``,
    and writes down one that is cancelled meanwhile (method ``cancelled``)."""

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        if method != "context.inspect":
            return await super().dispatch(method, params)
        write_call(self.record, method, params)
        try:
            while not (self.record.parent / INSPECT_GATE_FILE).exists():  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            write_call(self.record, "cancelled", {})
            raise
        return await self.inner.dispatch(method, params)


def create_facade(data_dir: Path | None = None) -> RecordingFacade:
    assert data_dir is not None
    return RecordingFacade(create_reference(data_dir), data_dir / CALLS_FILE)


def create_gated_facade(data_dir: Path | None = None) -> GatedFacade:
    assert data_dir is not None
    return GatedFacade(create_reference(data_dir), data_dir / CALLS_FILE)


def create_held_inspect_facade(data_dir: Path | None = None) -> HeldInspectFacade:
    assert data_dir is not None
    return HeldInspectFacade(create_reference(data_dir), data_dir / CALLS_FILE)


def release_inspect(data_dir: Path) -> None:
    (data_dir / INSPECT_GATE_FILE).touch()


def open_gate(data_dir: Path) -> None:
    (data_dir / GATE_FILE).touch()


def write_call(record: Path, method: str, params: Mapping[str, Any] | None) -> None:
    """One call written down, with when it came (``time.monotonic``, the
    same clock in the test's process as in the server's)."""
    call = {"method": method, "params": dict(params or {}), "at": time.monotonic()}
    with record.open("a", encoding="utf-8") as out:
        out.write(json.dumps(call) + "\n")


def _calls(data_dir: Path) -> list[dict[str, Any]]:
    path = data_dir / CALLS_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def recorded_calls(data_dir: Path) -> list[dict[str, Any]]:
    """Each call's method and params, in order."""
    return [{"method": c["method"], "params": c["params"]} for c in _calls(data_dir)]


def call_times(data_dir: Path, method: str) -> list[float]:
    """When each call of ``method`` came, in order (``time.monotonic``)."""
    return [c["at"] for c in _calls(data_dir) if c["method"] == method]


class LimitedFacade(RecordingFacade):
    """A backend that does not offer some operations: absent from its
    ``acp.initialize`` list and refused as unknown, as a real one would."""

    lacking = frozenset({"resource.resolve"})

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        if canonical_method(method) in self.lacking:  # under either name
            await super().dispatch(method, params)  # recorded: a call that should not happen
            raise MethodNotFound(f"{method} is not implemented by this backend")
        answer = await super().dispatch(method, params)
        if method == "acp.initialize":
            answer["operations"] = [op for op in answer["operations"] if op not in self.lacking]
        return answer


class PlanlessFacade(LimitedFacade):
    """A deployment without plans (no ``plan.*``), as upstream ACP servers may be."""

    lacking = frozenset(
        {
            "plan.list",
            "plan.get",
            "plan.create",
            "plan.execute",
            "plan.preview",
            "plan.apply",
            "plan.cancel",
        }
    )


class SlowPlanGetFacade(RecordingFacade):
    """Every ``plan.get`` takes ``PLAN_GET_SECONDS`` (a slow or stuck backend)."""

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        try:
            return await super().dispatch(method, params)  # recorded as it arrives
        finally:
            if method == "plan.get":
                await asyncio.sleep(PLAN_GET_SECONDS)


PLAN_GET_SECONDS = 5.0


class SchemalessFacade(LimitedFacade):
    """A backend that cannot say what an ``acp.toml`` may declare."""

    lacking = frozenset({"validation.schema"})


class StreamlessFacade(RecordingFacade):
    """Requests work; the event stream fails at once, every time."""

    async def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        raise StreamDropped("the event stream broke")
        yield {}  # an async generator that never yields


def create_limited_facade(data_dir: Path | None = None) -> LimitedFacade:
    assert data_dir is not None
    return LimitedFacade(create_reference(data_dir), data_dir / CALLS_FILE)


def create_planless_facade(data_dir: Path | None = None) -> PlanlessFacade:
    assert data_dir is not None
    return PlanlessFacade(create_reference(data_dir), data_dir / CALLS_FILE)


def create_streamless_facade(data_dir: Path | None = None) -> StreamlessFacade:
    assert data_dir is not None
    return StreamlessFacade(create_reference(data_dir), data_dir / CALLS_FILE)


def create_slow_plan_get_facade(data_dir: Path | None = None) -> SlowPlanGetFacade:
    assert data_dir is not None
    return SlowPlanGetFacade(create_reference(data_dir), data_dir / CALLS_FILE)


def create_schemaless_facade(data_dir: Path | None = None) -> SchemalessFacade:
    assert data_dir is not None
    return SchemalessFacade(create_reference(data_dir), data_dir / CALLS_FILE)
