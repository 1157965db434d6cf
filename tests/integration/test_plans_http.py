"""Plans in server mode: the same calls over HTTP, a CONFLICT with its paths, a
proposed fix followed over SSE to its end."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from conftest import LiveServer

from acp_client.client import AcpClient
from acp_client.errors import Conflict
from acp_client.events import PlanApplied, PlanChanged
from acp_client.models import FileEdit, PlanState
from acp_client.transport.http import HttpTransport


def project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    fix = [sys.executable, "-c", "open('a.py', 'w').write('x = 2\\n')"]
    (root / "acp.toml").write_text(
        '[[validations]]\nname = "check"\nmode = "required"\n'
        f'command = {json.dumps([sys.executable, "-c", "pass"])}\nformat = "exit-code"\n'
        f"fix = {json.dumps(fix)}\n"
    )
    return root


async def test_a_plan_over_http_conflicts_then_applies(
    live_server: LiveServer, tmp_path: Path
) -> None:
    root = project(tmp_path / "work" / "p")
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        start = await client.initialize()
        await client.resource_register(str(root), "p")
        plan = await client.plan_create(
            "p", title="t", files=(FileEdit(path="a.py", new_text="x = 3\n"),)
        )
        preview = await client.plan_preview(plan.id)
        root.joinpath("a.py").write_text("x = 'mine'\n")
        with pytest.raises(Conflict) as caught:
            await client.plan_apply(plan.id, preview.plan_hash)
        assert caught.value.data["paths"] == ["a.py"]
        assert caught.value.remedy is not None
        assert root.joinpath("a.py").read_text() == "x = 'mine'\n"

        proposed = await client.plan_execute("p", "check")
        states = []
        async with asyncio.timeout(30):
            async for event in client.events(start.last_event_id or 0):
                if isinstance(event, PlanChanged) and event.plan.id == proposed.id:
                    states.append(event.plan.state)
                    if event.plan.state is PlanState.COMPLETE:
                        break
        assert states[0] is PlanState.QUEUED and PlanState.PROCESSING in states
        ready = await client.plan_preview(proposed.id)
        await client.plan_apply(proposed.id, ready.plan_hash)
        async with asyncio.timeout(30):
            async for event in client.events(start.last_event_id or 0):
                if isinstance(event, PlanApplied) and event.plan_id == proposed.id:
                    assert event.paths == ("a.py",)
                    break
    assert root.joinpath("a.py").read_text() == "x = 2\n"
