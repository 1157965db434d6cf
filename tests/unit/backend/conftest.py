"""Backend parts on a real SQLite database in a fresh temporary data dir."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from acp_backend.eventlog import EventLog
from acp_backend.facade import BackendFacade, create_facade
from acp_backend.registry import Registry
from acp_backend.store import Store


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(data_dir: Path) -> Iterator[Store]:
    store = Store(data_dir)
    yield store
    store.close()


@pytest.fixture
def events(store: Store) -> EventLog:
    return EventLog(store, retention=100, poll_interval=0.05)


@pytest.fixture
def registry(store: Store, events: EventLog) -> Registry:
    return Registry(store, events)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A directory to register, with a file in it."""
    root = tmp_path / "work" / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    return root


@pytest.fixture
async def facade(data_dir: Path) -> AsyncIterator[BackendFacade]:
    facade = create_facade(data_dir)
    yield facade
    await facade.aclose()
