"""The typed client end to end on the in-process transport: calls, errors, events."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from acp_client.connect import connect
from acp_client.errors import Conflict, PlanError
from acp_client.events import PlanApplied, PlanChanged
from acp_client.models import ChangeKind, Decision, FileEdit, Location, PlanState, TextEdit


async def test_the_client_creates_previews_and_applies_and_hears_it(
    tmp_path: Path, project: Path
) -> None:
    async with await connect(data_dir=tmp_path / "data") as client:
        start = await client.initialize()
        await client.resource_register(str(project), "p")
        head = Location(path="src/a.py", line=0, character=0, end_line=1, end_character=0)
        files = (
            FileEdit(path="src/a.py", edits=(TextEdit(location=head, new_text=""),)),
            FileEdit(path="src/b.py", kind=ChangeKind.RENAME, old_path="src/b.py"),
        )
        with pytest.raises(PlanError, match="already exists"):  # a rename onto itself
            await client.plan_create("p", title="t", files=files)
        files = (files[0], FileEdit(path="src/c.py", kind=ChangeKind.RENAME, old_path="src/b.py"))
        decision = Decision(question="Why?", chosen="tidy", confidence=0.5)
        plan = await client.plan_create("p", title="tidy", files=files, decisions=(decision,))
        preview = await client.plan_preview(plan.id)
        assert [c.kind for c in preview.changes] == [ChangeKind.MODIFY, ChangeKind.RENAME]

        (project / "src" / "c.py").write_text("in the way\n")
        with pytest.raises(Conflict) as caught:
            await client.plan_apply(plan.id, preview.plan_hash)
        assert caught.value.data["paths"] == ["src/c.py"]
        (project / "src" / "c.py").unlink()

        applied = await client.plan_apply(plan.id, preview.plan_hash)
        assert applied.state is PlanState.APPLIED
        assert [p.id for p in await client.plan_list("p", (PlanState.APPLIED,))] == [plan.id]

        seen: list[object] = []
        async with asyncio.timeout(5):
            async for event in client.events(start.last_event_id or 0):
                seen.append(event)
                if isinstance(event, PlanApplied):
                    break
        assert [type(e) for e in seen if isinstance(e, PlanChanged | PlanApplied)] == [
            PlanChanged,
            PlanChanged,
            PlanApplied,
        ]
        assert seen[-1].paths == ("src/a.py", "src/b.py", "src/c.py")  # type: ignore[attr-defined]
