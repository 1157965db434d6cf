"""``validation.run`` starts the validators before it records the run's start
(the commit overlaps them), and a start that cannot be recorded leaves
nothing behind: no process, no result, no event."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acp_backend.eventlog import EventLog
from acp_backend.facade import BackendFacade
from acp_backend.validation import runner
from acp_backend.validation.service import ValidationService
from acp_client.errors import InvalidState
from acp_client.events import ValidationStarted

DECLARATIONS = """\
[[validations]]
name = "slow"
mode = "required"
format = "pattern"
command = ["sleep", "30"]
"""


@pytest.fixture
async def resource_id(facade: BackendFacade, workspace: Path) -> str:
    (workspace / "acp.toml").write_text(DECLARATIONS)
    registered = await facade.dispatch("resource.register", {"path": str(workspace)})
    return str(registered["id"])


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """The validator's processes started (``sleep``: not the runner's helpers)."""
    started: list[subprocess.Popen[bytes]] = []

    class Recorded(subprocess.Popen[bytes]):
        def __init__(self, args: Any, *more: Any, **kwargs: Any) -> None:
            super().__init__(args, *more, **kwargs)
            if "sleep" in str(args):
                started.append(self)

    monkeypatch.setattr(runner.subprocess, "Popen", Recorded)
    return started


def publishing(
    monkeypatch: pytest.MonkeyPatch, on_started: Any
) -> list[tuple[type[Any], dict[str, Any]]]:
    """Call ``on_started`` where the run's start is about to be recorded;
    every event recorded goes in the list returned."""
    recorded: list[tuple[type[Any], dict[str, Any]]] = []
    original = EventLog.publish

    def publish(self: EventLog, event_type: type[Any], **fields: Any) -> Any:
        if event_type is ValidationStarted:
            on_started()
        event = original(self, event_type, **fields)
        recorded.append((event_type, fields))
        return event

    monkeypatch.setattr(EventLog, "publish", publish)
    return recorded


async def test_the_validator_starts_before_the_run_s_start_is_recorded(
    facade: BackendFacade,
    resource_id: str,
    spawned: list[subprocess.Popen[bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen_at_start: list[int] = []
    publishing(monkeypatch, lambda: seen_at_start.append(len(spawned)))
    started = await facade.dispatch("validation.run", {"resource": resource_id})
    assert seen_at_start == [1]  # the process was running when the start was recorded
    await facade.dispatch("validation.cancel", {"run_id": started["run_id"]})


async def test_a_start_that_cannot_be_recorded_leaves_nothing_running(
    facade: BackendFacade,
    resource_id: str,
    spawned: list[subprocess.Popen[bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse() -> None:
        raise InvalidState("the database is locked")

    recorded = publishing(monkeypatch, refuse)
    with pytest.raises(InvalidState):
        await facade.dispatch("validation.run", {"resource": resource_id})
    (process,) = spawned
    for _ in range(200):  # the job is cancelled: its process is killed and reaped
        if process.poll() is not None:
            break
        await asyncio.sleep(0.025)
    assert process.returncode is not None
    await asyncio.sleep(0.1)  # the supervisor's turn: it must record nothing
    assert recorded == []
    runs = facade.services.service(ValidationService, ValidationService).runs
    assert not runs._runs and not runs._running
    assert facade.services.store.latest_results(resource_id) == ([], None)
