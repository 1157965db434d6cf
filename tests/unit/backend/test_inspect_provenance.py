"""Provenance through the facade: real plans created, previewed and applied,
then the file edited; the plan stays on its lines by their content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_backend.facade import BackendFacade
from acp_backend.inspect.provenance import LineMap, Recorded, touches, where_now
from acp_client.models import ContextInfo, Plan, PlanState
from tests.support.plans import settled

BEFORE = "import os\n\n\ndef total(items):\n    return sum(items)\n\n\nprint(total([1]))\n"
AFTER = "import os\n\n\ndef total(items):\n    return sum(items, start=0)\n\n\nprint(total([1]))\n"
DECISION = {
    "question": "How to make the sum explicit?",
    "chosen": "pass start=0",
    "alternatives": ["leave it"],
    "rationale": "empty lists are common",
    "confidence": 0.8,
}


@pytest.fixture
async def project(facade: BackendFacade, workspace: Path) -> Path:
    (workspace / "calc.py").write_text(BEFORE)
    await facade.dispatch("resource.register", {"path": str(workspace), "name": "proj"})
    return workspace


async def plan_for(facade: BackendFacade, text: str, **more: Any) -> Plan:
    raw = await facade.dispatch(
        "plan.create",
        {
            "resource": "proj",
            "title": "Explicit start",
            "author": "alice",
            "files": [{"path": "calc.py", "new_text": text}],
            "decisions": [DECISION],
            **more,
        },
    )
    return await settled(facade, Plan.model_validate(raw).id)


async def apply(facade: BackendFacade, plan: Plan) -> None:
    preview = await facade.dispatch("plan.preview", {"plan_id": plan.id})
    await facade.dispatch("plan.apply", {"plan_id": plan.id, "expected_hash": preview["plan_hash"]})


async def inspect(facade: BackendFacade, line: int, **more: Any) -> ContextInfo:
    raw = await facade.dispatch(
        "context.inspect", {"resource": "proj", "path": "calc.py", "line": line, **more}
    )
    return ContextInfo.model_validate(raw)


async def test_a_pending_plan_shows_on_the_lines_it_would_change(
    facade: BackendFacade, project: Path
) -> None:
    plan = await plan_for(facade, AFTER)
    assert plan.state is PlanState.COMPLETE
    (here,) = (await inspect(facade, 4)).provenance
    assert here.plan.id == plan.id and here.applied_at is None
    assert (here.location.line, here.location.end_line) == (4, 5)
    assert (await inspect(facade, 3)).provenance == ()


async def test_an_applied_plan_with_its_decisions_on_its_lines(
    facade: BackendFacade, project: Path
) -> None:
    plan = await plan_for(facade, AFTER)
    await apply(facade, plan)
    (here,) = (await inspect(facade, 4)).provenance
    assert here.plan.title == "Explicit start" and here.plan.author == "alice"
    assert here.plan.state is PlanState.APPLIED and here.applied_at is not None
    (decision,) = here.plan.decisions
    assert (decision.chosen, decision.confidence) == ("pass start=0", 0.8)
    assert not here.relocated and (here.location.line, here.location.end_line) == (4, 5)
    for line in (0, 3, 5, 7):
        assert (await inspect(facade, line)).provenance == (), line


async def test_a_plan_the_editor_applied_is_on_its_lines_too(
    facade: BackendFacade, project: Path
) -> None:
    plan = await plan_for(facade, "# header\n" + AFTER)
    preview = await facade.dispatch("plan.preview", {"plan_id": plan.id})
    (project / "calc.py").write_text("# header\n" + AFTER)  # the editor saved its edit
    await facade.dispatch(
        "plan.apply",
        {"plan_id": plan.id, "expected_hash": preview["plan_hash"], "applied_by_client": True},
    )
    for line in (0, 5):  # the header it added, the line it changed (moved down by one)
        (here,) = (await inspect(facade, line)).provenance
        assert here.plan.id == plan.id and here.applied_at is not None, line
    for line in (1, 4, 6):
        assert (await inspect(facade, line)).provenance == (), line


async def test_provenance_survives_an_edit_above(facade: BackendFacade, project: Path) -> None:
    await apply(facade, await plan_for(facade, AFTER))
    edited = "# a header\n# added later\n\n" + AFTER
    (project / "calc.py").write_text(edited)
    (here,) = (await inspect(facade, 7)).provenance
    assert here.relocated and (here.location.line, here.location.end_line) == (7, 8)
    assert (await inspect(facade, 4)).provenance == ()
    # The client's unsaved text is followed the same way.
    (here,) = (await inspect(facade, 8, text="\n" + edited)).provenance
    assert here.location.line == 8


async def test_a_plan_on_a_file_with_a_bom_is_on_its_lines(
    facade: BackendFacade, project: Path
) -> None:
    # Its edits, and the lines inspected, do not count the BOM; the file keeps it.
    (project / "calc.py").write_bytes(("\ufeff" + BEFORE).encode())
    new = "\ufeff" + AFTER.replace("import os", "import sys")
    plan = await plan_for(facade, new)
    assert {here.plan.id for here in (await inspect(facade, 0)).provenance} == {plan.id}
    await apply(facade, plan)
    assert (project / "calc.py").read_bytes() == new.encode()
    for line in (0, 4):
        (here,) = (await inspect(facade, line)).provenance
        assert here.plan.id == plan.id and not here.relocated, line
        (here,) = (await inspect(facade, line, text=new.removeprefix("\ufeff"))).provenance
        assert here.plan.id == plan.id and not here.relocated, line
    assert (await inspect(facade, 1)).provenance == ()


async def test_a_line_rewritten_since_is_no_longer_the_plan_s(
    facade: BackendFacade, project: Path
) -> None:
    await apply(facade, await plan_for(facade, AFTER))
    (project / "calc.py").write_text(AFTER.replace("start=0", "start=1"))
    assert (await inspect(facade, 4)).provenance == ()


async def test_two_applied_plans_newest_first(facade: BackendFacade, project: Path) -> None:
    first = await plan_for(facade, AFTER)
    await apply(facade, first)
    second = await plan_for(facade, AFTER.replace("items, start=0", "items, start=0  # explicit"))
    await apply(facade, second)
    assert [here.plan.id for here in (await inspect(facade, 4)).provenance] == [second.id]
    (project / "calc.py").write_text(AFTER)  # the second plan's line reverted by hand
    assert [here.plan.id for here in (await inspect(facade, 4)).provenance] == [first.id]


def record(start: int, end: int, text: str) -> Recorded:
    plan = Plan.model_validate(
        {
            "id": "P",
            "resource_id": "R",
            "title": "t",
            "phase": "apply",
            "state": "applied",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }
    )
    return Recorded(plan, start, end, plan.updated_at, text)


def test_a_removal_sits_before_the_line_that_followed_it() -> None:
    then = ["a", "c", "d"]  # "b" was removed before "c"
    removal = record(1, 1, "")
    assert where_now(removal, LineMap(then, ["x", "a", "c", "d"])) == (2, 2)
    assert touches((2, 2), 2) and not touches((2, 2), 1) and not touches((2, 2), 3)
    assert where_now(removal, LineMap(then, ["a", "C", "d"])) is None


def test_partly_rewritten_ranges_keep_the_surviving_lines() -> None:
    then = ["a", "b", "c", "d"]
    produced = record(1, 3, "")
    assert where_now(produced, LineMap(then, ["a", "B", "c", "d"])) == (2, 3)
    assert where_now(produced, None) == (1, 3)  # no text to follow: as recorded
