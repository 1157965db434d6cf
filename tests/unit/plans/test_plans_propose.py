""" "Propose fix": a validation's fix command run in a sandbox, its diff a plan."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from acp_backend.facade import BackendFacade, create_facade
from acp_backend.limits import plan_concurrency, sandbox_ttl_seconds
from acp_backend.plans.lifecycle import plans_of
from acp_client.errors import InvalidParams, InvalidState
from acp_client.models import Plan, PlanState
from tests.support.plans import plan_when, settled
from tests.unit.plans.plan_helpers import PY, git_commit_all, leftovers, worktrees


def fixer(name: str, *fix: str) -> str:
    """An informational validation that never runs on a change, with ``fix`` as its fix."""
    fix_line = f"fix = {json.dumps([PY, *fix])}\n" if fix else ""
    return (
        f'[[validations]]\nname = "{name}"\nmode = "informational"\n'
        f'command = {json.dumps([PY, "-c", "pass"])}\nformat = "exit-code"\n'
        f'{fix_line}applies_to = ["none"]\n\n'
    )


def printed(new: str, old: str = "x = 1", path: str = "src/b.py") -> str:
    """What a fixer such as ``ruff check --fix-only --diff`` prints."""
    return f"--- {path}\n+++ {path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"


# A required check that fails while `bad` is in src/b.py, and fixers.
NOBAD = "import sys; sys.exit('bad' in open('src/b.py').read())"
MESSY = (
    "import os; os.makedirs('src/__pycache__'); open('src/__pycache__/b.pyc', 'w').write('x'); "
    "open('src/b.py', 'w').write('x = 2\\n')"
)
CONFIG = (
    f'[[validations]]\nname = "nobad"\nmode = "required"\n'
    f'command = {json.dumps([PY, "-c", NOBAD])}\nformat = "exit-code"\napplies_to = ["*.py"]\n\n'
    + fixer("good-fixer", "-c", "open('src/b.py', 'w').write('x = 2  # good\\n')")
    + fixer("bad-fixer", "-c", "open('src/b.py', 'w').write('x = 2  # bad\\n')")
    + fixer("slow-fixer", "-c", "import time; time.sleep(30)")
    + fixer("diff-fixer", "print_diff.py")
    + fixer("bad-diff-fixer", "-c", f"print({printed('x = 2  # bad')!r}, end='')")
    + fixer("stale-diff-fixer", "-c", f"print({printed('x = 4', old='x = 9')!r}, end='')")
    + fixer("escaping-diff-fixer", "-c", f"print({printed('x = 5', path='../b.py')!r}, end='')")
    + fixer("messy-fixer", "-c", MESSY)
    + fixer("no-fix")
)


@pytest.fixture
def project(project: Path) -> Path:
    (project / "acp.toml").write_text(CONFIG)
    (project / "print_diff.py").write_text(f"print({printed('x = 3')!r}, end='')\n")
    return project


async def propose(facade: BackendFacade, validation: str) -> Plan:
    raw = await facade.dispatch("plan.execute", {"resource": "p", "validation": validation})
    return Plan.model_validate(raw)


async def test_a_fix_that_passes_in_the_sandbox_is_complete_and_applies(
    facade: BackendFacade, project: Path
) -> None:
    queued = await propose(facade, "good-fixer")
    assert queued.state is PlanState.QUEUED
    plan = await settled(facade, queued.id)
    assert plan.state is PlanState.COMPLETE, plan.reason
    assert plan.paths == ("src/b.py",) and plan.sandbox_root is not None
    assert (project / "src" / "b.py").read_text() == "x = 1\n"  # untouched until apply
    # Its sandbox maps back to the resource, and its results carry the plan.
    resolved = await facade.dispatch(
        "resource.resolve", {"path": str(Path(plan.sandbox_root) / "src" / "b.py")}
    )
    assert resolved["sandbox"] and resolved["logical_path"] == "src/b.py"
    results = await facade.dispatch("validation.list_results", {"resource": "p", "plan": plan.id})
    assert {r["validation"]: r["passed"] for r in results["results"]} == {"nobad": True}
    assert {r["run_id"] for r in results["results"]} == {plan.validation_run_id}

    preview = await facade.dispatch("plan.preview", {"plan_id": plan.id})
    applied = await facade.dispatch(
        "plan.apply", {"plan_id": plan.id, "expected_hash": preview["plan_hash"]}
    )
    assert applied["state"] == "applied"
    assert (project / "src" / "b.py").read_text() == "x = 2  # good\n"
    assert not leftovers(Path(plan.sandbox_root), "*")  # the sandbox ends with the plan
    resource = await facade.dispatch("resource.resolve", {"path": str(project)})
    assert resource["resource"]["sandbox_roots"] == []


async def test_a_required_validation_failing_in_the_sandbox_constrains_the_plan(
    facade: BackendFacade, project: Path
) -> None:
    plan = await settled(facade, (await propose(facade, "bad-fixer")).id)
    assert plan.state is PlanState.CONSTRAINED
    assert plan.reason is not None and "nobad" in plan.reason
    preview = await facade.dispatch("plan.preview", {"plan_id": plan.id})
    params = {"plan_id": plan.id, "expected_hash": preview["plan_hash"]}
    with pytest.raises(InvalidState, match=r"cannot be applied: it is constrained: .*nobad") as no:
        await facade.dispatch("plan.apply", params)
    assert no.value.remedy is not None and "apply it anyway" in no.value.remedy
    assert (project / "src" / "b.py").read_text() == "x = 1\n"
    forced = await facade.dispatch("plan.apply", {**params, "force": True})
    assert forced["state"] == "applied" and forced["forced"] is True


async def test_sandbox_validation_can_be_rerun_for_a_plan(facade: BackendFacade) -> None:
    plan = await settled(facade, (await propose(facade, "bad-fixer")).id)
    run = await facade.dispatch(
        "validation.run", {"resource": "p", "plan": plan.id, "validations": ["nobad"]}
    )
    assert run["validations"] == ["nobad"]


async def test_cancelling_a_running_fix_kills_it_and_removes_the_sandbox(
    facade: BackendFacade, data_dir: Path
) -> None:
    plan = await plan_when(
        facade, (await propose(facade, "slow-fixer")).id, lambda p: p.sandbox_root is not None
    )
    early = {"plan_id": plan.id, "expected_hash": "sha256:" + "0" * 64}
    with pytest.raises(InvalidState, match=r"cannot be applied: it is processing: .* not ready"):
        await facade.dispatch("plan.apply", early)
    cancelled = await facade.dispatch("plan.cancel", {"plan_id": plan.id})
    assert cancelled["state"] == "cancelled"
    assert not leftovers(data_dir / "sandboxes", "*")
    assert (await facade.dispatch("plan.get", {"plan_id": plan.id}))["state"] == "cancelled"


async def test_a_validation_without_a_fix_is_refused(facade: BackendFacade) -> None:
    with pytest.raises(InvalidParams, match="no fix command"):
        await propose(facade, "no-fix")


async def test_a_git_resource_gets_a_worktree_with_its_uncommitted_changes(
    facade: BackendFacade, project: Path
) -> None:
    git_commit_all(project)
    (project / "src" / "a.py").write_text("uncommitted = True\n")
    plan = await settled(facade, (await propose(facade, "good-fixer")).id)
    assert plan.state is PlanState.COMPLETE, plan.reason
    assert plan.sandbox_root is not None
    sandbox = Path(plan.sandbox_root)
    assert (sandbox / ".git").is_file()  # a worktree
    assert (sandbox / "src" / "a.py").read_text() == "uncommitted = True\n"
    assert plan.paths == ("src/b.py",)  # the caught-up file is not part of the fix
    await facade.dispatch("plan.cancel", {"plan_id": plan.id})
    assert not leftovers(sandbox.parent, "*")
    assert len(worktrees(project)) == 1


@pytest.mark.parametrize("in_git", [False, True], ids=["folder", "git"])
async def test_a_fixer_that_prints_a_diff_has_it_taken_and_written_into_the_sandbox(
    facade: BackendFacade, project: Path, in_git: bool
) -> None:
    if in_git:
        git_commit_all(project)
    plan = await settled(facade, (await propose(facade, "diff-fixer")).id)
    assert plan.state is PlanState.COMPLETE, plan.reason
    preview = await facade.dispatch("plan.preview", {"plan_id": plan.id})
    assert [c["new_text"] for c in preview["changes"]] == ["x = 3\n"]
    # The validations re-ran on the fixed code: the sandbox holds it.
    assert plan.sandbox_root is not None
    assert (Path(plan.sandbox_root) / "src" / "b.py").read_text() == "x = 3\n"
    assert (project / "src" / "b.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("in_git", [False, True], ids=["folder", "git"])
async def test_a_printed_diff_that_breaks_a_required_check_constrains_the_plan(
    facade: BackendFacade, project: Path, in_git: bool
) -> None:
    if in_git:
        git_commit_all(project)
    plan = await settled(facade, (await propose(facade, "bad-diff-fixer")).id)
    assert plan.state is PlanState.CONSTRAINED, plan.reason
    assert plan.reason is not None and "nobad" in plan.reason


@pytest.mark.parametrize(
    ("fixer_name", "reason"),
    [
        ("stale-diff-fixer", "the diff does not apply"),
        ("escaping-diff-fixer", "refused: it climbs out with '..'"),
    ],
)
async def test_a_printed_diff_that_cannot_be_written_errors_the_plan(
    facade: BackendFacade, project: Path, data_dir: Path, fixer_name: str, reason: str
) -> None:
    plan = await settled(facade, (await propose(facade, fixer_name)).id)
    assert plan.state is PlanState.ERRORED
    assert plan.reason is not None and reason in plan.reason
    assert (project / "src" / "b.py").read_text() == "x = 1\n"
    assert not (project.parent / "b.py").exists()
    assert not leftovers(data_dir / "sandboxes", "*")


async def test_caches_a_fixer_leaves_are_not_part_of_the_plan(
    facade: BackendFacade, project: Path
) -> None:
    git_commit_all(project)  # git's view of the files, and no .gitignore to help
    plan = await settled(facade, (await propose(facade, "messy-fixer")).id)
    assert plan.state is PlanState.COMPLETE, plan.reason
    assert plan.paths == ("src/b.py",)


async def test_proposing_the_same_fix_again_supersedes_the_older_plan(
    facade: BackendFacade, project: Path, data_dir: Path
) -> None:
    git_commit_all(project)
    first = await settled(facade, (await propose(facade, "good-fixer")).id)
    again = await settled(facade, (await propose(facade, "good-fixer")).id)
    assert again.state is PlanState.COMPLETE, again.reason
    older = Plan.model_validate(await facade.dispatch("plan.get", {"plan_id": first.id}))
    assert older.state is PlanState.CANCELLED
    assert older.reason == f"superseded by plan {again.id}, which makes the same change"
    # One sandbox, one extra worktree: the newer plan's.
    assert [p.name for p in (data_dir / "sandboxes").iterdir()] == [again.id]
    assert len(worktrees(project)) == 2
    # A different change is another plan.
    other = await settled(facade, (await propose(facade, "diff-fixer")).id)
    assert other.state is PlanState.COMPLETE
    kept = Plan.model_validate(await facade.dispatch("plan.get", {"plan_id": again.id}))
    assert kept.state is PlanState.COMPLETE


async def test_proposals_beyond_the_limit_wait_queued_without_a_sandbox(
    data_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_PLAN_CONCURRENCY", "1")
    facade = create_facade(data_dir)
    try:
        await facade.dispatch("resource.register", {"path": str(project), "name": "p"})
        (project / "acp.toml").write_text(CONFIG)
        slow = await plan_when(
            facade, (await propose(facade, "slow-fixer")).id, lambda p: p.sandbox_root is not None
        )
        waiting = await propose(facade, "good-fixer")
        await asyncio.sleep(0.5)
        held = Plan.model_validate(await facade.dispatch("plan.get", {"plan_id": waiting.id}))
        assert held.state is PlanState.QUEUED and held.sandbox_root is None
        assert [p.name for p in (data_dir / "sandboxes").iterdir()] == [slow.id]
        await facade.dispatch("plan.cancel", {"plan_id": slow.id})  # frees the slot
        done = await settled(facade, waiting.id)
        assert done.state is PlanState.COMPLETE, done.reason
    finally:
        await facade.aclose()


async def test_a_ready_plan_expires_after_the_ttl_and_gc_clears_what_a_crash_left(
    facade: BackendFacade, project: Path, data_dir: Path
) -> None:
    git_commit_all(project)
    ready = await settled(facade, (await propose(facade, "good-fixer")).id)
    assert ready.sandbox_root is not None
    leftover = data_dir / "sandboxes" / "01CRASHEDPLANWITHNORECORD0"
    leftover.mkdir()
    (leftover / "half-copied.py").write_text("x" * 1000)
    plans = plans_of(facade.services)
    now = datetime.now(UTC)
    swept = plans.sweep(now)  # within the TTL: only the leftover goes
    assert swept.expired == () and swept.removed == (leftover.name,)
    assert swept.freed_bytes >= 1000 and not leftover.exists()
    swept = plans.sweep(now + timedelta(hours=25))
    assert swept.expired == (ready.id,)
    expired = Plan.model_validate(await facade.dispatch("plan.get", {"plan_id": ready.id}))
    assert expired.state is PlanState.EXPIRED and expired.sandbox_root is None
    assert expired.reason is not None and "propose the fix again" in expired.reason
    assert not leftovers(Path(ready.sandbox_root), "*") and len(worktrees(project)) == 1
    with pytest.raises(InvalidState, match="it is expired"):
        await facade.dispatch("plan.apply", {"plan_id": ready.id, "expected_hash": "sha256:0"})


def test_a_limit_that_is_not_a_positive_number_is_one_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, raw in (("ACP_PLAN_CONCURRENCY", "0"), ("ACP_SANDBOX_TTL_HOURS", "soon")):
        monkeypatch.setenv(name, raw)
        with pytest.raises(InvalidState, match=rf"\${name} is {raw!r}"):
            plan_concurrency() if name == "ACP_PLAN_CONCURRENCY" else sandbox_ttl_seconds()
        monkeypatch.delenv(name)
