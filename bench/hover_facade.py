"""The reference backend, writing down the method of every call it answers
(one line per call in ``<data dir>/backend-calls``), for the benchmarks that
count them (bench_hover.py, bench_completion.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from acp_backend.facade import BackendFacade
from acp_backend.facade import create_facade as create_reference

CALLS = "backend-calls"


class CountingFacade:
    def __init__(self, inner: BackendFacade, record: Path) -> None:
        self.inner = inner
        self.record = record

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        self._count(method)
        return await self.inner.dispatch(method, params)

    async def call_typed(self, method: str, params: Mapping[str, Any] | None) -> BaseModel:
        """The typed path the language server takes in local mode, counted too."""
        self._count(method)
        return await self.inner.call_typed(method, params)

    def _count(self, method: str) -> None:
        with self.record.open("a", encoding="utf-8") as out:
            out.write(f"{method}\n")

    def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        return self.inner.subscribe(after)

    async def aclose(self) -> None:
        await self.inner.aclose()


def create_facade(data_dir: Path | None = None) -> CountingFacade:
    assert data_dir is not None
    return CountingFacade(create_reference(data_dir), data_dir / CALLS)


def calls(data_dir: Path, method: str | None = None) -> int:
    """Calls answered so far (of ``method``, or of any)."""
    path = data_dir / CALLS
    lines = path.read_text().splitlines() if path.exists() else []
    return sum(1 for line in lines if method is None or line == method)
