"""Plans in the editor: offered on the files they touch, applied through
``workspace/applyEdit`` (versioned, annotated where the editor can preview)
and then recorded with the backend; refused with one clear message, and
nothing written, when a file moved or a buffer holds unsaved changes;
cancelled; proposed from a validation's fix command with progress."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from lsprotocol import types

from acp_client.models import Plan, PlanState, Resource
from lsp_server.commands import PLAN_KIND
from tests.e2e.editing import Buffers
from tests.e2e.test_e2e_code_actions import actions_at, choose, started, unused_import
from tests.support import lsp_harness
from tests.support.lsp_harness import REPO, WAIT, Backend, Session, Starter, project, uri
from tests.support.waiting import until

SOURCE = "import os\nx = 1\n"
DIFF = """\
diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -1,2 +1 @@
-import os
 x = 1
"""
PROFILES_AND_MODES = [
    ("visual-studio-code", "local"),
    ("neovim@v0.11", "local"),
    ("emacs", "local"),
    ("visual-studio-code", "server"),
]


async def submit(backend: Backend, resource: Resource, diff: str = DIFF) -> Plan:
    """Another client (an agent, a CLI) submits a plan."""
    raw = await backend.facade.dispatch(
        "plan.create", {"resource": resource.id, "title": "Drop os", "diff": diff}
    )
    return Plan.model_validate(raw)


async def plan_state(backend: Backend, plan: Plan) -> PlanState:
    raw: Any = await backend.facade.dispatch("plan.get", {"plan_id": plan.id})
    return Plan.model_validate(raw).state


async def wait_state(backend: Backend, plan: Plan, state: PlanState) -> None:
    deadline = time.monotonic() + WAIT
    while (now := await plan_state(backend, plan)) is not state:
        assert time.monotonic() < deadline, f"plan {plan.id} is {now}, not {state}"
        await asyncio.sleep(0.05)


async def plan_action(session: Session, path: Path, title: str) -> types.CodeAction:
    """The plan action named ``title`` once the server knows the plan."""
    deadline = time.monotonic() + WAIT
    while True:
        actions = await actions_at(session, path, 0, 0, [PLAN_KIND])
        found = next((a for a in actions if a.title.startswith(title)), None)
        if found is not None:
            return found
        assert time.monotonic() < deadline, f"never offered {title!r}: {actions}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_apply_a_plan_through_the_editor(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root, resource, session, buffers = await started(tmp_path, backend, lsp, profile, mode)
    plan = await submit(backend, resource)
    apply = await plan_action(session, root / "a.py", "Apply plan “Drop os”")
    await choose(buffers, apply)
    assert buffers.text(root / "a.py") == "x = 1\n"
    (sent,) = buffers.received
    if profile == "visual-studio-code":  # versioned, and annotated for its refactor preview
        (document,) = sent.edit.document_changes or ()
        assert isinstance(document, types.TextDocumentEdit)
        assert document.text_document.version == 1
        assert sent.edit.change_annotations is not None
        (note,) = sent.edit.change_annotations.values()
        assert note.needs_confirmation and note.label == "Drop os"
    await until(
        lambda: any("Applied plan “Drop os” in the editor" in m for m in session.messages())
    )
    assert await plan_state(backend, plan) is PlanState.IN_EDITOR  # in the buffer only
    assert (root / "a.py").read_text() == SOURCE
    buffers.save(root / "a.py")  # the user keeps it: on disk, the plan is applied
    await wait_state(backend, plan, PlanState.APPLIED)


@pytest.mark.parametrize("profile", ["visual-studio-code", "emacs"])
async def test_an_apply_after_the_file_changed_is_a_conflict_and_writes_nothing(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    root, resource, session, buffers = await started(tmp_path, backend, lsp, profile, "local")
    plan = await submit(backend, resource)
    apply = await plan_action(session, root / "a.py", "Apply plan")
    (root / "a.py").write_text("import os\nx = 2\n")  # changed on disk by someone else
    await choose(buffers, apply)
    await until(lambda: any("CONFLICT" in m for m in session.messages()))
    (message,) = [m for m in session.messages() if "CONFLICT" in m]
    assert "a.py" in message and "Nothing was written" in message
    assert buffers.received == [] and buffers.text(root / "a.py") == SOURCE
    assert (root / "a.py").read_text() == "import os\nx = 2\n"
    assert await plan_state(backend, plan) is PlanState.COMPLETE


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.11"])
async def test_a_buffer_with_unsaved_changes_is_never_overwritten(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    root, resource, session, buffers = await started(tmp_path, backend, lsp, profile, "local")
    plan = await submit(backend, resource)
    apply = await plan_action(session, root / "a.py", "Apply plan")
    buffers.type(root / "a.py", "import os\nx = 1\ny = 'typed, unsaved'\n")
    await choose(buffers, apply)
    await until(lambda: any("unsaved changes" in m for m in session.messages()))
    assert buffers.received == []
    assert buffers.text(root / "a.py").endswith("'typed, unsaved'\n")
    assert (root / "a.py").read_text() == SOURCE
    assert await plan_state(backend, plan) is PlanState.COMPLETE


async def test_a_declined_edit_records_nothing(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root, resource, session, buffers = await started(
        tmp_path, backend, lsp, "visual-studio-code", "local"
    )
    plan = await submit(backend, resource)
    buffers.refuse = True  # the user says no in the refactor preview
    await choose(buffers, await plan_action(session, root / "a.py", "Apply plan"))
    await until(lambda: any("did not apply" in m for m in session.messages()))
    assert await plan_state(backend, plan) is PlanState.COMPLETE


async def test_cancel_a_plan_and_it_is_no_longer_offered(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root, resource, session, buffers = await started(tmp_path, backend, lsp, "emacs", "server")
    plan = await submit(backend, resource)
    await choose(buffers, await plan_action(session, root / "a.py", "Cancel plan"))
    await until(lambda: any("cancelled" in m for m in session.messages()))
    assert await plan_state(backend, plan) is PlanState.CANCELLED

    deadline = time.monotonic() + WAIT
    while await actions_at(session, root / "a.py", 0, 0, [PLAN_KIND]):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)


async def test_propose_fix_runs_the_fix_in_a_sandbox_with_progress(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    demo = Path(shutil.copytree(REPO / "examples" / "demo", tmp_path / "demo"))
    resource = await backend.register(demo)
    session = await lsp("visual-studio-code", [demo])
    buffers = Buffers(session)
    buffers.open(demo / "inventory.py")
    await session.wait_in_play(demo)
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(demo / "inventory.py")))
    )
    await session.wait_diagnostics(
        demo / "inventory.py", lambda d: any(x.source == "ruff" for x in d)
    )
    actions = await actions_at(session, demo / "inventory.py", 2, 0)
    propose = next(a for a in actions if a.title == "Propose fix with ruff (as a plan)")
    await choose(buffers, propose)
    # ruff cannot fix the demo's undefined names, but they were there before
    # the plan: it makes nothing worse, so it is ready, and the message says so.
    await until(lambda: any("is ready" in m for m in session.messages()), 30)
    (settled,) = [m for m in session.messages() if "is ready" in m]
    assert "inventory.py" in settled and "constrained" not in str(session.messages())
    (token,) = [t for t in session.client.progress_reports if str(t).startswith("acp-plan-")]
    kinds = [type(r).__name__ for r in session.client.progress_reports[token]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    raw: Any = await backend.facade.dispatch("plan.list", {"resource": resource.id})
    (plan,) = [Plan.model_validate(p) for p in raw["plans"]]
    assert plan.state is PlanState.COMPLETE and "inventory.py" in plan.paths
    # Preview opens the proposed text: the sandbox copy, with the plan's own findings.
    await choose(buffers, await plan_action(session, demo / "inventory.py", "Preview plan"))
    await until(lambda: bool(session.client.shown_documents))
    assert plan.sandbox_root is not None
    (shown,) = session.client.shown_documents
    assert shown.uri == uri(Path(plan.sandbox_root) / "inventory.py")
    logged = [m.message for m in session.client.log_messages]
    assert any("-import os" in m and "inventory.py" in m for m in logged), logged
    apply = await plan_action(
        session,
        demo / "inventory.py",
        f"Apply plan “Fix ruff findings” (ruff, 1 file, #{plan.id[-4:]})",
    )
    assert "anyway" not in apply.title
    before = buffers.text(demo / "inventory.py")
    await choose(buffers, apply)
    await until(lambda: any("Applied plan" in m for m in session.messages()))
    assert "import os" not in buffers.text(demo / "inventory.py")
    assert await plan_state(backend, plan) is PlanState.IN_EDITOR
    # Undone before saving: the plan is back, as if never applied.
    buffers.type(demo / "inventory.py", before)
    await wait_state(backend, plan, PlanState.COMPLETE)


CHECK = """\
import pathlib
for path in sorted(pathlib.Path(".").glob("*.py")):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if "bad" in line:
            print(f"{path}:{number}:1: {line.strip()} is bad")
"""
FIX = """\
import pathlib
path = pathlib.Path("a.py")
path.write_text(path.read_text().replace("bad = 1", "good = 1"))
"""
TOML = """\
[[validations]]
name = "bad"
mode = "required"
command = ["python", "check.py"]
format = "pattern"
pattern = '^(?P<path>[^:]+):(?P<line>\\d+):(?P<column>\\d+): (?P<message>.*)$'
columns = "code-points"
fix = ["python", "fix.py"]
applies_to = ["*.py"]
"""


@pytest.mark.parametrize(
    ("profile", "mode"), [("neovim@v0.11", "local"), ("visual-studio-code", "server")]
)
async def test_a_plans_results_show_on_its_sandbox_and_the_file_keeps_its_own(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    files = {"a.py": "bad = 1\nbad = 2\n", "check.py": CHECK, "fix.py": FIX, "acp.toml": TOML}
    root = project(tmp_path / "app", files)
    resource = await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    session.open(root / "a.py")
    await session.wait_in_play(root)
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(root / "a.py")))
    )
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 2)
    raw: Any = await backend.facade.dispatch(
        "plan.execute", {"resource": resource.id, "validation": "bad"}
    )
    plan = Plan.model_validate(raw)
    deadline = time.monotonic() + WAIT
    while (plan := await fetched(backend, plan)).state not in (
        PlanState.CONSTRAINED,
        PlanState.COMPLETE,
    ):
        assert time.monotonic() < deadline, plan
        await asyncio.sleep(0.05)
    # What is left (line 2) was there before: the plan made nothing worse.
    assert plan.state is PlanState.COMPLETE and plan.sandbox_root is not None
    copy = Path(plan.sandbox_root) / "a.py"
    assert copy.read_text() == "good = 1\nbad = 2\n"
    session.open(copy)
    (left,) = await session.wait_diagnostics(copy, lambda d: len(d) == 1)
    assert left.range.start.line == 1 and left.data["plan_id"] == plan.id
    shown = await session.diagnostics(root / "a.py")
    assert sorted(d.range.start.line for d in shown) == [0, 1]  # its own, untouched
    await backend.facade.dispatch("plan.cancel", {"plan_id": plan.id})
    await session.wait_diagnostics(copy, lambda d: d == [])  # the sandbox is gone


async def fetched(backend: Backend, plan: Plan) -> Plan:
    return Plan.model_validate(await backend.facade.dispatch("plan.get", {"plan_id": plan.id}))


async def test_cancelling_the_progress_cancels_the_plan(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    slow = "import time\ntime.sleep(30)\n"
    files = {"a.py": "bad = 1\n", "check.py": CHECK, "fix.py": slow, "acp.toml": TOML}
    root = project(tmp_path / "app", files)
    resource = await backend.register(root)
    session = await lsp("visual-studio-code", [root])
    session.open(root / "a.py")
    await session.wait_in_play(root)
    answer: Any = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="acp.proposeFix", arguments=[{"resource_id": resource.id, "validation": "bad"}]
        )
    )
    plan = Plan.model_validate(answer)
    token = f"acp-plan-{plan.id}"
    await until(lambda: bool(session.client.progress_reports.get(token)))
    session.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    deadline = time.monotonic() + WAIT
    while (plan := await fetched(backend, plan)).state is not PlanState.CANCELLED:
        assert time.monotonic() < deadline, plan
        await asyncio.sleep(0.05)
    await until(lambda: any("cancelled" in m for m in session.messages()))


@pytest.fixture
def no_apply_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every profile started in the test lacks workspace/applyEdit."""
    recorded = lsp_harness.capabilities_for

    def capabilities(profile: str) -> types.ClientCapabilities:
        caps = recorded(profile)
        assert caps.workspace is not None
        return attrs.evolve(caps, workspace=attrs.evolve(caps.workspace, apply_edit=False))

    monkeypatch.setattr(lsp_harness, "capabilities_for", capabilities)


async def test_without_apply_edit_the_backend_applies_but_never_over_unsaved_changes(
    tmp_path: Path, backend: Backend, lsp: Starter, no_apply_edit: None
) -> None:
    root, resource, session, buffers = await started(
        tmp_path, backend, lsp, "visual-studio-code", "local"
    )
    plan = await submit(backend, resource)
    buffers.type(root / "a.py", "import os\nx = 1  # unsaved\n")
    await choose(buffers, await plan_action(session, root / "a.py", "Apply plan"))
    await until(lambda: any("unsaved changes" in m for m in session.messages()))
    assert (root / "a.py").read_text() == SOURCE
    assert await plan_state(backend, plan) is PlanState.COMPLETE
    buffers.type(root / "a.py", SOURCE)  # reverted: the buffer is the file again
    await choose(buffers, await plan_action(session, root / "a.py", "Apply plan"))
    await until(lambda: any("on disk" in m for m in session.messages()))
    assert buffers.received == []  # nothing was sent to the editor to apply
    assert (root / "a.py").read_text() == "x = 1\n"
    assert await plan_state(backend, plan) is PlanState.APPLIED


async def test_a_fix_that_could_not_reach_the_buffer_is_not_offered(
    tmp_path: Path, backend: Backend, lsp: Starter, no_apply_edit: None
) -> None:
    """eglot's profile without applyEdit: no resolve either, so no fix."""
    root, resource, session, _ = await started(tmp_path, backend, lsp, "emacs", "local")
    backend.publish(unused_import(resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    titles = [a.title for a in await actions_at(session, root / "a.py", 0, 8)]
    assert "Run validations on a.py" in titles
    assert not [t for t in titles if t.startswith(("Fix with", "Fix all"))], titles


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.11"])
async def test_a_refusal_leads_somewhere_and_a_plan_that_no_longer_fits_is_proposed_again(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    """Unsaved changes: the advice is to revert them (saving would make the
    plan stop fitting). Saved anyway: the plan is no longer offered to
    preview or apply, only to propose again (once) or cancel."""
    demo = Path(shutil.copytree(REPO / "examples" / "demo", tmp_path / "demo"))
    await backend.register(demo)
    session = await lsp(profile, [demo])
    buffers = Buffers(session)
    inventory = demo / "inventory.py"
    buffers.open(inventory)
    await session.wait_in_play(demo)
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(inventory)))
    )
    await session.wait_diagnostics(inventory, lambda d: any(x.source == "ruff" for x in d))
    actions = await actions_at(session, inventory, 2, 0)
    await choose(buffers, next(a for a in actions if a.title.startswith("Propose fix with ruff")))
    await until(lambda: any("Plan “Fix ruff findings” is" in m for m in session.messages()), 30)
    apply = await plan_action(session, inventory, "Apply plan “Fix ruff findings” (ruff, ")

    typed = buffers.text(inventory) + "# typed, not saved\n"
    buffers.type(inventory, typed)
    await choose(buffers, apply)
    await until(lambda: any("not applied" in m for m in session.messages()))
    (refused,) = [m for m in session.messages() if "not applied" in m]
    assert "To apply it, revert the unsaved changes" in refused, refused

    buffers.save(inventory)  # saved anyway: the plan's base is gone
    deadline = time.monotonic() + WAIT
    while True:
        titles = [a.title for a in await actions_at(session, inventory, 2, 0)]
        plans = [t for t in titles if "plan “Fix ruff findings”" in t]
        if not any(t.startswith(("Preview", "Apply")) for t in plans):
            break
        assert time.monotonic() < deadline, titles
        await asyncio.sleep(0.05)
    again = [t for t in plans if t.startswith("Propose again with ruff")]
    assert len(again) == 1 and "no longer fits inventory.py" in again[0], titles
    assert [t for t in plans if t.startswith("Cancel")], titles


async def test_a_session_started_on_a_plans_sandbox_stays_quiet(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    """An editor that takes the sandbox's acp.toml for a project root starts
    a second server there: it says why once in its log and shows nothing, so
    nothing is shown twice (the resource's session shows the sandbox)."""
    demo = Path(shutil.copytree(REPO / "examples" / "demo", tmp_path / "demo"))
    resource = await backend.register(demo)
    raw: Any = await backend.facade.dispatch(
        "plan.execute", {"resource": resource.id, "validation": "ruff"}
    )
    deadline = time.monotonic() + 30
    while (plan := Plan.model_validate(raw)).sandbox_root is None:
        assert time.monotonic() < deadline, plan
        await asyncio.sleep(0.1)
        raw = await backend.facade.dispatch("plan.get", {"plan_id": plan.id})
    sandbox = Path(plan.sandbox_root)
    session = await lsp("neovim@v0.11", [sandbox])
    session.open(sandbox / "inventory.py")
    await until(lambda: any("stays quiet" in m.message for m in session.client.log_messages))
    await asyncio.sleep(0.5)  # what a live session would have sent by now
    assert session.published == [] or all(not p.diagnostics for _, p in session.published)
    (said,) = [m.message for m in session.client.log_messages if "stays quiet" in m.message]
    assert str(sandbox) in said and resource.name in said
