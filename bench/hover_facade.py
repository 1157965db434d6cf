"""The reference backend, counting the ``context.inspect`` calls it answers
(one line per call in ``<data dir>/inspect-calls``), for bench_hover.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from acp_backend.facade import BackendFacade
from acp_backend.facade import create_facade as create_reference

CALLS = "inspect-calls"


class CountingFacade:
    def __init__(self, inner: BackendFacade, record: Path) -> None:
        self.inner = inner
        self.record = record

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        if method == "context.inspect":
            with self.record.open("a", encoding="utf-8") as out:
                out.write("call\n")
        return await self.inner.dispatch(method, params)

    def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        return self.inner.subscribe(after)

    async def aclose(self) -> None:
        await self.inner.aclose()


def create_facade(data_dir: Path | None = None) -> CountingFacade:
    assert data_dir is not None
    return CountingFacade(create_reference(data_dir), data_dir / CALLS)


def calls(data_dir: Path) -> int:
    path = data_dir / CALLS
    return len(path.read_text().splitlines()) if path.exists() else 0
