"""The plans feature against a fake editor and a scripted backend: what is
offered on a file, and every way applying a plan ends — each refusal says
what to do and writes nothing; an apply reaches the backend only once the
editor has applied it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.errors import Conflict
from acp_client.events import PlanChanged
from acp_client.models import (
    ChangeKind,
    FileChange,
    Location,
    PlanState,
    TextEdit,
    ValidationMode,
    ValidationSpec,
)
from acp_client.text import BOM, digest
from lsp_server.code_actions import offered
from lsp_server.commands import APPLY_PLAN, PROPOSE_FIX, PlanArgs
from lsp_server.features.plans import Plans
from lsp_server.snapshot import Snapshot
from tests.support.edit_text import apply_edits
from tests.support.factories import finding, result
from tests.unit.lsp.fakes import (
    NOW,
    RESOURCE,
    FakeBackend,
    FakeEditor,
    Files,
    calls,
    edited,
    modify,
    plan,
    preview,
    snapshot,
)

BASE = "import os\nx = 1\n"
FIXED = "x = 1\n"
DROP_IMPORT = TextEdit(
    location=Location(path="a.py", line=0, character=0, end_line=1, end_character=0), new_text=""
)


def at(line: int, character: int) -> types.CodeActionParams:
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier("file:///r/a.py"),
        range=types.Range(types.Position(line, character), types.Position(line, character)),
        context=types.CodeActionContext(diagnostics=[]),
    )


def titles(shot: Snapshot, line: int = 0, character: int = 0) -> list[str]:
    backend_calls, editor = calls()
    return [
        a.title for a in offered(shot, at(line, character), [Plans(editor, backend_calls)]) or ()
    ]


# --- the listing -------------------------------------------------------------


def test_propose_fix_where_the_validation_declares_a_fix_command() -> None:
    shown = result("ruff", findings=[finding("a.py", 0, 7, "unused", end_character=9)])
    declared = ValidationSpec(name="ruff", mode=ValidationMode.REQUIRED, has_fix=True)
    shot = snapshot(results=[shown], specs={"ruff": declared})
    backend_calls, editor = calls()
    (propose,) = offered(shot, at(0, 8), [Plans(editor, backend_calls)]) or []
    assert propose.title == "Propose fix with ruff (as a plan)"
    assert propose.command is not None and propose.command.command == PROPOSE_FIX
    assert propose.command.arguments == [
        {"resource_id": "R", "validation": "ruff", "paths": ["a.py"]}
    ]
    undeclared = ValidationSpec(name="ruff", mode=ValidationMode.REQUIRED)
    assert titles(snapshot(results=[shown], specs={"ruff": undeclared}), 0, 8) == []
    assert titles(snapshot(results=[shown], specs={"ruff": declared}, sandbox=True), 0, 8) == []


def test_plans_touching_the_file_by_their_state() -> None:
    name = "plan “ruff fix” (1 file, #P1)"
    assert titles(snapshot(plans=[plan(PlanState.COMPLETE)])) == [
        f"Preview {name}",
        f"Apply {name}",
        f"Re-run validations of {name}",
        f"Cancel {name}",
    ]
    for working in (PlanState.QUEUED, PlanState.PROCESSING):
        assert titles(snapshot(plans=[plan(working)])) == [f"Cancel {name}"]
    for ended in (PlanState.APPLIED, PlanState.CANCELLED, PlanState.ERRORED):
        assert titles(snapshot(plans=[plan(ended)])) == []
    assert titles(snapshot(plans=[plan(paths=("b.py",))])) == []


def test_a_constrained_plan_is_offered_only_as_forced_and_says_why() -> None:
    constrained = plan(PlanState.CONSTRAINED, reason="mypy failed in the sandbox")
    backend_calls, editor = calls()
    actions = offered(snapshot(plans=[constrained]), at(0, 0), [Plans(editor, backend_calls)])
    (apply,) = [a for a in actions or () if a.command and a.command.command == APPLY_PLAN]
    assert apply.title == (
        "Apply plan “ruff fix” (1 file, #P1) anyway (constrained: mypy failed in the sandbox)"
    )
    assert apply.command is not None
    assert apply.command.arguments == [{"plan_id": "P1", "force": True}]


# --- applying: every way it ends ---------------------------------------------


def scripted(
    state: PlanState = PlanState.COMPLETE,
    changes: Sequence[FileChange] | None = None,
    moved: tuple[str, ...] = (),
    reason: str | None = None,
) -> FakeBackend:
    backend = FakeBackend()
    backend.plans["P1"] = plan(state, reason=reason)
    backend.previews["P1"] = preview(
        "P1",
        changes if changes is not None else [modify("a.py", BASE, [DROP_IMPORT], FIXED)],
        moved,
    )
    return backend


async def apply(
    backend: FakeBackend,
    files: Files | None = None,
    *,
    profile: str = "visual-studio-code",
    force: bool = False,
    applies: bool = True,
    apply_edit: bool = True,
) -> tuple[object, FakeEditor]:
    backend_calls, editor = calls(backend)
    editor.applies = applies
    shot = snapshot(files=files, backend=backend, profile=profile)
    if not apply_edit:
        shot = replace(shot, support=replace(shot.support, apply_edit=False))
    answer = await Plans(editor, backend_calls).apply(shot, PlanArgs(plan_id="P1", force=force))
    return answer, editor


def buffer_after(editor: FakeEditor, text: str) -> str:
    """The buffer after the one document edit the editor was sent."""
    ((workspace_edit, _),) = editor.edits
    if workspace_edit.document_changes is not None:
        (change,) = workspace_edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        return apply_edits(text, list(change.edits), "utf-16")
    assert workspace_edit.changes is not None
    (edits,) = workspace_edit.changes.values()
    return apply_edits(text, list(edits), "utf-16")


def recorded(backend: FakeBackend) -> list[dict[str, object]]:
    return [args for name, args in backend.calls if name == "plan.apply"]


async def test_applied_in_the_editor_then_recorded_with_the_backend() -> None:
    backend = scripted()
    answer, editor = await apply(backend, Files(disk={"a.py": BASE}, buffers={"a.py": (3, BASE)}))
    assert answer == {"applied": True, "plan": backend.plans["P1"].model_dump(mode="json")}
    assert buffer_after(editor, BASE) == FIXED
    ((workspace_edit, label),) = editor.edits
    assert label == "Apply plan “ruff fix”"
    (change,) = workspace_edit.document_changes or ()
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 3
    assert workspace_edit.change_annotations is not None  # VS Code previews it
    assert recorded(backend) == [{"hash": "H", "force": False, "by_client": True}]
    (said,) = editor.messages()
    assert said.startswith("Applied plan “ruff fix” in the editor (1 file); save to keep it")


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("crlf", [False, True])
async def test_a_bom_or_crlf_file_is_applied_as_any_other(bom: bool, crlf: bool) -> None:
    """The backend read the file with its BOM (and its line ends); the
    buffer has no BOM: the same file, the same apply."""
    base, fixed = BASE, FIXED
    if crlf:
        base, fixed = base.replace("\n", "\r\n"), fixed.replace("\n", "\r\n")
    on_disk = (BOM if bom else "") + base
    change = FileChange(
        path="a.py", base_sha256=digest(on_disk), new_text=fixed, edits=(DROP_IMPORT,)
    )
    backend = scripted(changes=[change])
    answer, editor = await apply(backend, Files(disk={"a.py": base}, buffers={"a.py": (1, base)}))
    assert answer["applied"] is True  # type: ignore[index]
    assert buffer_after(editor, base) == fixed
    unopened, editor = await apply(scripted(changes=[change]), Files(disk={"a.py": base}))
    assert unopened["applied"] is True  # type: ignore[index]


@pytest.mark.parametrize(
    ("state", "reason", "said"),
    [
        (PlanState.CONSTRAINED, "ruff failed", "it is constrained: ruff failed"),
        (PlanState.QUEUED, None, "it is queued: its change set is not ready yet"),
        (PlanState.PROCESSING, None, "it is processing: its change set is not ready yet"),
        (PlanState.APPLIED, None, "it is applied: there is nothing to apply"),
        (PlanState.CANCELLED, None, "it is cancelled: there is nothing to apply"),
        (PlanState.ERRORED, None, "it is errored: there is nothing to apply"),
    ],
)
async def test_a_plan_that_cannot_be_applied_is_refused_with_what_to_do(
    state: PlanState, reason: str | None, said: str
) -> None:
    backend = scripted(state, reason=reason)
    answer, editor = await apply(backend)
    assert answer == {"applied": False}
    (message,) = editor.messages()
    assert message.startswith(f"Plan “ruff fix” was not applied: {said}. Nothing was written.")
    assert editor.edits == [] and recorded(backend) == []


async def test_a_constrained_plan_is_applied_when_forced_and_recorded_so() -> None:
    backend = scripted(PlanState.CONSTRAINED, reason="ruff failed")
    answer, _ = await apply(backend, force=True)
    assert answer["applied"] is True  # type: ignore[index]
    assert recorded(backend) == [{"hash": "H", "force": True, "by_client": True}]


async def test_a_plan_whose_files_moved_is_a_conflict() -> None:
    answer, editor = await apply(scripted(moved=("a.py",)))
    assert answer == {"applied": False}
    assert "(CONFLICT): a.py changed since it was made" in editor.messages()[0]
    assert "Propose again" in editor.messages()[0]
    assert editor.edits == []


async def test_a_buffer_with_unsaved_changes_is_never_overwritten() -> None:
    typed = BASE + "y = 2\n"
    backend = scripted()
    answer, editor = await apply(backend, Files(disk={"a.py": BASE}, buffers={"a.py": (2, typed)}))
    assert answer == {"applied": False}
    (message,) = editor.messages()
    assert "a.py: it has unsaved changes" in message
    assert "To apply it, revert the unsaved changes (saving them makes the plan" in message
    assert editor.edits == [] and recorded(backend) == []


async def test_a_file_changed_on_disk_since_the_preview_is_a_conflict() -> None:
    answer, editor = await apply(scripted(), Files(disk={"a.py": "other\n"}))
    assert answer == {"applied": False}
    assert "a.py: it changed since the preview" in editor.messages()[0]
    assert "Propose again" in editor.messages()[0]


async def test_a_target_a_symlink_leads_out_of_the_root_is_refused(tmp_path: Path) -> None:
    """A backend is a peer: a path it names that resolves outside the
    resource (or into .git) gets one message, and the editor no edit."""
    root, outside = tmp_path / "r", tmp_path / "outside"
    (root / ".git").mkdir(parents=True)
    outside.mkdir()
    (root / "link").symlink_to(outside)
    (root / "git").symlink_to(root / ".git")
    for path, why in [
        ("link/a.py", "a symlink leads out of the resource root"),
        ("git/config", "a symlink leads into .git or onto the root"),
    ]:
        drop = TextEdit(location=replace(DROP_IMPORT.location, path=path), new_text="")
        backend = scripted(changes=[modify(path, BASE, [drop], FIXED)])
        backend_calls, editor = calls(backend)
        shot = snapshot(files=Files(disk={path: BASE}), backend=backend)
        shot = replace(shot, resources=[RESOURCE.model_copy(update={"root": str(root)})])
        answer = await Plans(editor, backend_calls).apply(shot, PlanArgs(plan_id="P1"))
        assert answer == {"applied": False}
        assert editor.messages() == [
            f"Plan “ruff fix” was not applied: plan target {path!r} refused: {why} (a plan "
            "may only change files inside its resource, outside .git). Nothing was written."
        ]
        assert editor.edits == [] and recorded(backend) == []


async def test_the_editor_declining_leaves_the_plan_open() -> None:
    backend = scripted()
    answer, editor = await apply(backend, applies=False)
    assert answer == {"applied": False}
    assert "did not apply plan “ruff fix” (the user declined)" in editor.messages()[0]
    # VS Code previews changes that need confirmation unticked: say so.
    assert "tick its changes before Apply" in editor.messages()[0]
    assert recorded(backend) == []
    _, plain = await apply(scripted(), applies=False, profile="neovim@v0.11")
    assert "did not apply plan" in plain.messages()[0] and "tick" not in plain.messages()[0]


async def test_the_backend_refusing_to_record_says_how_to_go_back() -> None:
    backend = scripted()
    backend.refuses = Conflict("a.py changed since the preview")
    answer, editor = await apply(backend)
    assert answer == {"applied": False}
    assert "Undo the edit in the editor to go back" in editor.messages()[0]


async def test_an_editor_without_apply_edit_gets_the_backends_apply() -> None:
    backend = scripted()
    answer, editor = await apply(backend, Files(disk={"a.py": BASE}), apply_edit=False)
    assert answer["applied"] is True and editor.edits == []  # type: ignore[index]
    assert recorded(backend) == [{"hash": "H", "force": False, "by_client": False}]
    # A client that cannot create files gets a creating plan applied by the backend.
    created = FileChange(path="new.py", kind=ChangeKind.CREATE, new_text="x\n")
    backend = scripted(changes=[created])
    answer, editor = await apply(backend, Files(disk={"a.py": BASE}), profile="neovim@v0.11")
    assert answer["applied"] is True  # type: ignore[index]
    assert editor.edits == []
    assert recorded(backend) == [{"hash": "H", "force": False, "by_client": False}]
    assert editor.messages()[-1].startswith("Applied plan “ruff fix” on disk")


async def test_the_backends_apply_never_goes_over_unsaved_changes_and_says_its_refusal() -> None:
    created = FileChange(path="new.py", kind=ChangeKind.CREATE, new_text="x\n")
    change = modify("a.py", BASE, [DROP_IMPORT], FIXED)
    dirty = Files(disk={"a.py": BASE}, buffers={"a.py": (2, BASE + "#\n")})
    backend = scripted(changes=[change, created])
    backend.previews["P1"] = preview("P1", [created])
    answer, editor = await apply(backend, dirty, profile="neovim@v0.11")
    assert answer["applied"] is True  # type: ignore[index]  # a.py is not among its files
    backend = scripted(changes=[created, modify("a.py", BASE + "#\n", [], BASE)])
    answer, editor = await apply(backend, dirty, profile="neovim@v0.11")
    assert answer == {"applied": False}
    assert "a.py has unsaved changes" in editor.messages()[0]
    assert recorded(backend) == []
    backend = scripted(changes=[created])
    backend.refuses = Conflict("new.py exists")
    answer, editor = await apply(backend, Files(disk={"a.py": BASE}), profile="neovim@v0.11")
    assert answer == {"applied": False}
    assert "was not applied (CONFLICT): new.py exists. Nothing was written." in editor.messages()[0]


def test_plans_with_one_title_are_told_apart() -> None:
    first = plan(plan_id="01ABCDEFGHIJKLMNOPQRSTAAAA").model_copy(
        update={"source_validation": "ruff", "paths": ("a.py", "b.py")}
    )
    second = first.model_copy(update={"id": "01ABCDEFGHIJKLMNOPQRSTBBBB"})
    shown = [t for t in titles(snapshot(plans=[first, second])) if t.startswith("Apply")]
    assert shown == [
        "Apply plan “ruff fix” (ruff, 2 files, #AAAA)",
        "Apply plan “ruff fix” (ruff, 2 files, #BBBB)",
    ]


def test_a_plan_that_no_longer_fits_the_file_is_offered_only_to_propose_again() -> None:
    """After a save the plan's base is gone: no Preview, no Apply; one
    "Propose again" however many such plans, and Cancel for each."""
    declared = ValidationSpec(name="ruff", mode=ValidationMode.REQUIRED, has_fix=True)
    made = [
        plan(plan_id=f"01ABCDEFGHIJKLMNOPQRST{n}{n}{n}{n}").model_copy(
            update={"source_validation": "ruff"}
        )
        for n in (1, 2)
    ]
    bases = {p.id: {"a.py": digest("import os\nx = 1\n")} for p in made}
    fitting = replace(snapshot(plans=made, specs={"ruff": declared}), bases=bases)
    assert [t for t in titles(fitting) if t.startswith("Apply")] == [
        "Apply plan “ruff fix” (ruff, 1 file, #1111)",
        "Apply plan “ruff fix” (ruff, 1 file, #2222)",
    ]
    saved_since = replace(snapshot("x = 1\n", plans=made, specs={"ruff": declared}), bases=bases)
    assert titles(saved_since) == [
        "Propose again with ruff (plan “ruff fix” (ruff, 1 file, #1111) no longer fits a.py)",
        "Cancel plan “ruff fix” (ruff, 1 file, #1111)",
        "Cancel plan “ruff fix” (ruff, 1 file, #2222)",
    ]
    # On a ruff finding, "Propose again" stands for "Propose fix" (the same command).
    shown = result("ruff", findings=[finding("a.py", 0, 0, "unused")])
    on_finding = replace(saved_since, held=snapshot("x = 1\n", results=[shown]).held)
    proposals = [t for t in titles(on_finding) if t.startswith("Propose")]
    assert proposals == [
        "Propose again with ruff (plan “ruff fix” (ruff, 1 file, #1111) no longer fits a.py)"
    ]
    unsaved = edited(fitting, "x = 1\n")  # typed, not saved: the plan still fits the file
    assert "Apply plan “ruff fix” (ruff, 1 file, #1111)" in titles(unsaved)


async def test_a_plan_applied_in_the_editor_is_settled_on_save_and_on_undo() -> None:
    """Recorded in_editor at once; the backend is asked to settle it when a
    file of it is saved, and when its buffers come back to what they were
    (an undo) — not at every keystroke in between."""
    backend = scripted()
    backend_calls, editor = calls(backend)
    feature = Plans(editor, backend_calls)
    files = Files(disk={"a.py": BASE}, buffers={"a.py": (1, BASE)})
    shot = snapshot(files=files, backend=backend)
    answer = await feature.apply(shot, PlanArgs(plan_id="P1"))
    assert answer["applied"] is True  # type: ignore[index]
    assert backend.plans["P1"].state is PlanState.IN_EDITOR
    assert "recorded as applied in the editor, not on disk" in editor.messages()[-1]

    def settles() -> list[dict[str, object]]:
        return [args for name, args in backend.calls if name == "plan.settle"]

    files.buffers["a.py"] = (2, FIXED)  # the editor applied it
    feature.document_edited(snapshot(FIXED, files=files, backend=backend))
    files.buffers["a.py"] = (3, FIXED + "y = 2\n")  # typing on
    feature.document_edited(snapshot(FIXED + "y = 2\n", files=files, backend=backend))
    await settle_tasks(editor)
    assert settles() == []  # still in the buffers: nothing to tell
    files.buffers["a.py"] = (4, BASE)  # undone
    feature.document_edited(snapshot(BASE, files=files, backend=backend))
    await settle_tasks(editor)
    assert settles() == [{"in_buffers": False}]
    files.buffers["a.py"] = (5, FIXED)  # redone, then saved
    files.disk["a.py"] = FIXED
    feature.document_edited(snapshot(FIXED, files=files, backend=backend))
    feature.document_saved(snapshot(FIXED, files=files, backend=backend))
    await settle_tasks(editor)
    assert settles()[1:] == [{"in_buffers": True}, {"in_buffers": True}]
    held = backend.plans["P1"]
    stale = held.model_copy(update={"state": PlanState.COMPLETE, "updated_at": NOW})
    feature.event(PlanChanged(event_id=8, at=NOW, plan=stale), shot)  # from before: ignored
    feature.document_saved(snapshot(FIXED, files=files, backend=backend))
    await settle_tasks(editor)
    assert len(settles()) == 4
    later = held.updated_at + timedelta(seconds=1)
    applied = held.model_copy(update={"state": PlanState.APPLIED, "updated_at": later})
    feature.event(PlanChanged(event_id=9, at=NOW, plan=applied), shot)
    feature.document_saved(snapshot(FIXED, files=files, backend=backend))
    await settle_tasks(editor)
    assert len(settles()) == 4  # settled: no longer followed


async def settle_tasks(editor: FakeEditor) -> None:
    for task in editor.tasks:
        await task
