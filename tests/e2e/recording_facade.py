"""The reference backend, with every method the server calls written down.

Loaded by the server under test through ``--facade`` (local mode loads its
backend by import path), so the record is of what really crossed the wire.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from acp_backend.facade import BackendFacade
from acp_backend.facade import create_facade as create_reference

CALLS_FILE = "calls.jsonl"


class RecordingFacade:
    def __init__(self, inner: BackendFacade, record: Path) -> None:
        self.inner = inner
        self.record = record

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        with self.record.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"method": method, "params": dict(params or {})}) + "\n")
        return await self.inner.dispatch(method, params)

    def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        return self.inner.subscribe(after)

    async def aclose(self) -> None:
        await self.inner.aclose()


def create_facade(data_dir: Path | None = None) -> RecordingFacade:
    assert data_dir is not None
    return RecordingFacade(create_reference(data_dir), data_dir / CALLS_FILE)


def recorded_calls(data_dir: Path) -> list[dict[str, Any]]:
    path = data_dir / CALLS_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
