"""The background load after ``initialize`` (``lsp_server.preload``, ADR 0016)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_server.preload import Preload


@pytest.fixture
def slow_module(tmp_path: Path) -> Iterator[str]:
    """A module whose import takes a while, so a test can act mid-load."""
    name = f"slow_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text("import time\ntime.sleep(0.2)\n")
    sys.path.insert(0, str(tmp_path))
    yield name
    sys.path.remove(str(tmp_path))
    sys.modules.pop(name, None)


async def test_a_cancelled_waiter_leaves_the_load_alone(slow_module: str) -> None:
    preload = Preload([slow_module])
    preload.start()
    (loading,) = [t for t in threading.enumerate() if t.name == "acp-lsp-preload"]
    # An exit must wait for an import in progress rather than stop the thread in it.
    assert not loading.daemon
    waiter = asyncio.create_task(preload.loaded())
    await asyncio.sleep(0.01)
    waiter.cancel()  # the editor went away: the session's tasks are cancelled
    with pytest.raises(asyncio.CancelledError):
        await waiter
    preload.wait()  # neither cancelled nor failed
    loading.join(5)
    assert slow_module in sys.modules


async def test_waiting_before_any_start_returns_at_once() -> None:
    preload = Preload(["a_module_that_does_not_exist"])
    preload.wait()
    await preload.loaded()


def test_a_failed_import_is_left_to_the_first_use(slow_module: str) -> None:
    preload = Preload(["a_module_that_does_not_exist", slow_module])
    preload.start()
    preload.wait()  # does not raise: the import that needs it raises, where it is used
    assert slow_module not in sys.modules
