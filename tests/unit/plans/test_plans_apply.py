"""plan.create -> plan.preview -> plan.apply through the real facade, on real files."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acp_backend.facade import BackendFacade, create_facade
from acp_backend.plans.applying import _apply_locked
from acp_backend.plans.lifecycle import plans_of
from acp_backend.plans.records import applied_lines, plans_touching
from acp_client.errors import Conflict, InvalidParams, InvalidState, OutsideRoot, PlanError
from acp_client.events import Event
from acp_client.models import Plan, PlanOrigin, PlanPreview, PlanState
from acp_client.operations import PlanApplyParams
from tests.unit.plans.plan_helpers import create, diff_of, leftovers

NEW_A = "import sys\n\nprint(sys.argv)\n"


async def preview(facade: BackendFacade, plan: Plan) -> PlanPreview:
    return PlanPreview.model_validate(await facade.dispatch("plan.preview", {"plan_id": plan.id}))


async def apply(facade: BackendFacade, plan: Plan, plan_hash: str, **extra: object) -> Plan:
    params = {"plan_id": plan.id, "expected_hash": plan_hash, **extra}
    return Plan.model_validate(await facade.dispatch("plan.apply", params))


async def test_a_git_diff_becomes_a_plan_that_applies_all_files(
    facade: BackendFacade, project: Path
) -> None:
    diff = diff_of(
        project,
        {"src/a.py": NEW_A, "src/b.py": None, "src/new/c.py": "c = 3", "README": "hi\n"},
    )
    plan = await create(
        facade,
        diff=diff,
        author="agent-7",
        decisions=[
            {"question": "Keep os?", "chosen": "no", "alternatives": ["yes"], "confidence": 0.8}
        ],
    )
    assert (plan.state, plan.origin, plan.author) == (
        PlanState.COMPLETE,
        PlanOrigin.SUBMITTED,
        "agent-7",
    )
    assert plan.paths == ("README", "src/a.py", "src/b.py", "src/new/c.py")
    assert plan.decisions[0].confidence == 0.8

    shown = await preview(facade, plan)
    kinds = {change.path: change.kind for change in shown.changes}
    assert kinds == {
        "src/a.py": "modify",
        "src/b.py": "delete",
        "src/new/c.py": "create",
        "README": "create",
    }
    [modify] = [c for c in shown.changes if c.path == "src/a.py"]
    assert modify.edits[0].location.line == 0 and modify.edits[0].new_text == ""
    assert "-import os" in modify.diff and shown.moved == ()
    os.chmod(project / "src" / "a.py", 0o640)
    mode_before = (project / "src" / "a.py").stat().st_mode

    applied = await apply(facade, plan, shown.plan_hash)

    assert applied.state is PlanState.APPLIED and not applied.forced
    assert (project / "src" / "a.py").read_text() == NEW_A
    assert (project / "src" / "a.py").stat().st_mode == mode_before  # permissions kept
    assert not (project / "src" / "b.py").exists()
    assert (project / "src" / "new" / "c.py").read_text() == "c = 3"
    assert not leftovers(project)
    # Provenance, for hover: line 0 of a.py was produced by removing `import os`.
    resource_id = plan.resource_id
    touched = plans_touching(facade.services.store, resource_id, "src/a.py", 0)
    assert [t.plan.id for t in touched] == [plan.id]
    assert plans_touching(facade.services.store, resource_id, "src/a.py", 3) == []
    assert [t.plan.id for t in plans_touching(facade.services.store, resource_id, "README", 0)] == [
        plan.id
    ]


async def test_a_rename_with_an_edit_applies(facade: BackendFacade, project: Path) -> None:
    diff = diff_of(project, {"src/b.py": None, "src/renamed.py": "x = 1\n"})
    plan = await create(facade, diff=diff)
    shown = await preview(facade, plan)
    [change] = shown.changes
    assert (change.kind, change.old_path, change.path) == ("rename", "src/b.py", "src/renamed.py")
    await apply(facade, plan, shown.plan_hash)
    assert (project / "src" / "renamed.py").read_text() == "x = 1\n"
    assert not (project / "src" / "b.py").exists()


async def test_a_change_between_preview_and_apply_is_a_conflict_and_writes_nothing(
    facade: BackendFacade, project: Path
) -> None:
    plan = await create(facade, diff=diff_of(project, {"src/a.py": NEW_A, "src/b.py": "x = 2\n"}))
    shown = await preview(facade, plan)
    (project / "src" / "b.py").write_text("x = 'mine'\n")  # the user's edit, after the preview

    with pytest.raises(Conflict) as caught:
        await apply(facade, plan, shown.plan_hash)

    assert caught.value.data["paths"] == ["src/b.py"]
    assert (project / "src" / "b.py").read_text() == "x = 'mine'\n"
    assert (project / "src" / "a.py").read_text().startswith("import os")  # nor the other file
    again = await preview(facade, plan)
    assert again.moved == ("src/b.py",) and again.plan_hash != shown.plan_hash
    assert (await facade.dispatch("plan.get", {"plan_id": plan.id}))["state"] == "complete"


async def test_a_stale_hash_is_a_conflict(facade: BackendFacade, project: Path) -> None:
    plan = await create(facade, diff=diff_of(project, {"src/a.py": NEW_A}))
    with pytest.raises(Conflict):
        await apply(facade, plan, "sha256:" + "0" * 64)
    assert (project / "src" / "a.py").read_text().startswith("import os")


@pytest.mark.parametrize(
    "path",
    ["../outside.py", "/etc/passwd", ".git/config", "src/../../x.py", "src\\a.py"],
)
async def test_a_target_outside_the_root_is_refused(facade: BackendFacade, path: str) -> None:
    files = [{"path": path, "kind": "create", "new_text": "pwned\n"}]
    with pytest.raises(OutsideRoot):
        await create(facade, files=files)


async def test_a_diff_climbing_out_is_refused(facade: BackendFacade) -> None:
    with pytest.raises(OutsideRoot):
        await create(facade, diff="--- /dev/null\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x = 1\n")


async def test_a_failed_write_is_a_plan_error_and_nothing_is_written(
    facade: BackendFacade, project: Path
) -> None:
    # A name the file system takes, but whose temporary sibling is too long for it.
    long_name = "n" * 240 + ".py"
    files = [
        {"path": "src/b.py", "new_text": "x = 2\n"},
        {"path": f"src/{long_name}", "kind": "create", "new_text": "y = 1\n"},
    ]
    plan = await create(facade, files=files)
    shown = await preview(facade, plan)
    with pytest.raises(PlanError, match="could not be written"):
        await apply(facade, plan, shown.plan_hash)
    assert (project / "src" / "b.py").read_text() == "x = 1\n"
    assert not leftovers(project, ".*.tmp")
    assert (await facade.dispatch("plan.get", {"plan_id": plan.id}))["state"] == "complete"


async def test_a_symlink_leading_out_is_refused_at_create_and_at_apply(
    facade: BackendFacade, project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_text("secret = 1\n")
    (project / "linked").symlink_to(outside)
    with pytest.raises(OutsideRoot):
        await create(facade, files=[{"path": "linked/a.py", "new_text": "x\n"}])

    # A directory swapped for a symlink after the preview: apply refuses too.
    plan = await create(facade, files=[{"path": "src/b.py", "new_text": "x = 2\n"}])
    shown = await preview(facade, plan)
    (project / "src").rename(project / "src-moved")
    (outside / "b.py").write_text("x = 1\n")
    (project / "src").symlink_to(outside)
    with pytest.raises(OutsideRoot):
        await apply(facade, plan, shown.plan_hash)
    assert (outside / "b.py").read_text() == "x = 1\n"


async def test_file_edits_and_their_checks(facade: BackendFacade, project: Path) -> None:
    edit = {
        "location": {
            "path": "src/a.py",
            "line": 0,
            "character": 0,
            "end_line": 1,
            "end_character": 0,
        },
        "new_text": "",
    }
    plan = await create(facade, files=[{"path": "src/a.py", "edits": [edit]}])
    await apply(facade, plan, (await preview(facade, plan)).plan_hash)
    assert (project / "src" / "a.py").read_text() == NEW_A
    with pytest.raises(InvalidParams, match="located in"):
        await create(facade, files=[{"path": "src/b.py", "edits": [edit]}])
    with pytest.raises(PlanError, match="changes nothing"):
        await create(facade, files=[{"path": "src/b.py", "new_text": "x = 1\n"}])
    with pytest.raises(PlanError, match="does not apply"):
        await create(facade, diff="--- a/src/b.py\n+++ b/src/b.py\n@@ -1 +1 @@\n-y = 1\n+y = 2\n")
    with pytest.raises(InvalidParams, match="exactly one"):
        await facade.dispatch("plan.create", {"resource": "p", "title": "t"})


async def test_applied_and_cancelled_plans_stay_ended(facade: BackendFacade, project: Path) -> None:
    plan = await create(facade, diff=diff_of(project, {"src/a.py": NEW_A}))
    shown = await preview(facade, plan)
    await apply(facade, plan, shown.plan_hash)
    with pytest.raises(InvalidState, match="cannot be applied: it is applied") as refused:
        await apply(facade, plan, shown.plan_hash)
    assert refused.value.remedy == "propose a new plan"
    with pytest.raises(InvalidState):
        await facade.dispatch("plan.cancel", {"plan_id": plan.id})

    other = await create(facade, files=[{"path": "src/b.py", "new_text": "x = 2\n"}])
    cancelled = await facade.dispatch("plan.cancel", {"plan_id": other.id})
    assert cancelled["state"] == "cancelled"
    listed = await facade.dispatch("plan.list", {"resource": "p", "states": ["cancelled"]})
    assert [p["id"] for p in listed["plans"]] == [other.id]


async def test_the_rule_is_checked_again_under_the_apply_lock(
    facade: BackendFacade, project: Path
) -> None:
    # The plan was complete when plan.apply looked; by the time the lock is
    # held another process has constrained it: the same whole rule refuses.
    plan = await create(facade, files=[{"path": "src/b.py", "new_text": "x = 2\n"}])
    shown = await preview(facade, plan)
    plans = plans_of(facade.services)
    resource = facade.services.registry.get(plan.resource_id)
    changes = plans.records.changes(plan.id)
    plans.move(plan, state=PlanState.CONSTRAINED, reason="nobad found 1 problem")
    params = PlanApplyParams(plan_id=plan.id, expected_hash=shown.plan_hash)
    with pytest.raises(InvalidState, match="cannot be applied: it is constrained: nobad") as caught:
        _apply_locked(plans, plan, resource, changes, params)
    assert caught.value.remedy is not None and "anyway" in caught.value.remedy
    assert (project / "src" / "b.py").read_text() == "x = 1\n"
    forced = params.model_copy(update={"force": True})
    applied = _apply_locked(plans, plan, resource, changes, forced)
    assert applied.state is PlanState.APPLIED and applied.forced
    assert (project / "src" / "b.py").read_text() == "x = 2\n"


async def test_the_editor_applies_and_the_backend_records(
    facade: BackendFacade, project: Path
) -> None:
    """applied_by_client: the editor wrote (or will save) the change; nothing is written."""
    plan = await create(facade, diff=diff_of(project, {"src/a.py": NEW_A}))
    shown = await preview(facade, plan)
    (project / "src" / "a.py").write_text(NEW_A)  # the editor saved the edit already
    recorded = await apply(facade, plan, shown.plan_hash, applied_by_client=True)
    assert recorded.state is PlanState.IN_EDITOR  # applied once plan.settle finds it on disk
    assert (await settle(facade, plan, in_buffers=True)).state is PlanState.APPLIED
    # Something else entirely in the file: refused.
    other = await create(facade, files=[{"path": "src/b.py", "new_text": "x = 2\n"}])
    shown = await preview(facade, other)
    (project / "src" / "b.py").write_text("x = 'neither'\n")
    with pytest.raises(Conflict):
        await apply(facade, other, shown.plan_hash, applied_by_client=True)


async def events_until_now(facade: BackendFacade, after: int) -> AsyncIterator[Event]:
    last = facade.services.events.last_id()
    async for event in facade.services.events.events(after):
        yield event
        if event.event_id >= last:
            return


async def settle(facade: BackendFacade, plan: Plan, *, in_buffers: bool) -> Plan:
    params = {"plan_id": plan.id, "in_buffers": in_buffers}
    return Plan.model_validate(await facade.dispatch("plan.settle", params))


async def test_a_plan_applied_in_the_editor_is_applied_when_saved_and_undone_when_undone(
    facade: BackendFacade, project: Path
) -> None:
    """in_editor until its change is on disk (then applied, announced, its
    sandbox closed); undone before a save: back to complete, with no trace."""
    before = (project / "src" / "a.py").read_text()
    plan = await create(facade, diff=diff_of(project, {"src/a.py": NEW_A}))
    shown = await preview(facade, plan)
    held = await apply(facade, plan, shown.plan_hash, applied_by_client=True)
    assert held.state is PlanState.IN_EDITOR and not held.forced
    assert (project / "src" / "a.py").read_text() == before  # nothing written
    assert (await settle(facade, plan, in_buffers=True)).state is PlanState.IN_EDITOR  # unsaved
    with pytest.raises(InvalidState, match="applied in an editor"):
        await facade.dispatch("plan.cancel", {"plan_id": plan.id})
    with pytest.raises(InvalidState, match="applied in an editor already"):
        await apply(facade, plan, shown.plan_hash, applied_by_client=True)
    undone = await settle(facade, plan, in_buffers=False)  # the editor undid it
    assert undone.state is PlanState.COMPLETE
    assert applied_lines(facade.services.store, plan.resource_id, "src/a.py") == []
    # Applied again, then saved: applied, with the event every client hears.
    after = facade.services.events.last_id()
    shown = await preview(facade, plan)
    await apply(facade, plan, shown.plan_hash, applied_by_client=True)
    (project / "src" / "a.py").write_text(NEW_A)
    saved = await settle(facade, plan, in_buffers=True)
    assert saved.state is PlanState.APPLIED and saved.sandbox_root is None
    methods = [event.method async for event in events_until_now(facade, after)]
    assert "plan.applied" in methods
    assert (await settle(facade, plan, in_buffers=False)).state is PlanState.APPLIED  # ended


async def test_an_unreadable_journal_does_not_stop_the_backend(data_dir: Path) -> None:
    journals = data_dir / "plans" / "journal"
    journals.mkdir(parents=True, exist_ok=True)
    (journals / "01M8QZZZZZZZZZZZZZZZZZZZZZ.json").write_text("{not json")
    facade = create_facade(data_dir)  # starts, logs, keeps the file for a person
    await facade.aclose()
    assert (journals / "01M8QZZZZZZZZZZZZZZZZZZZZZ.json").exists()
