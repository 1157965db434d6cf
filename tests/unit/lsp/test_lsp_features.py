"""The validations, diagnostics, hover and symbols features against a fake
editor and a scripted backend: what each does with the hooks the session
calls and the snapshots it hands them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from lsprotocol import types

from acp_client.events import PlanChanged, ValidationCompleted, ValidationStarted
from acp_client.models import ContextFinding, ContextInfo, PlanState, ValidationSummary
from acp_client.text import digest, split_lines
from lsp_server.code_actions import offered
from lsp_server.documents import Document
from lsp_server.features.diagnostics import Diagnostics
from lsp_server.features.hover import Hover
from lsp_server.features.plans import Plans
from lsp_server.features.validations import Validations
from lsp_server.settings import RunOn, Settings
from lsp_server.snapshot import Snapshot
from tests.support.factories import finding, result
from tests.unit.lsp.fakes import RESOURCE, FakeSource, calls, edited, plan, snapshot

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Runs:
    """A backend that records the runs it is asked for."""

    asked: list[tuple[str, tuple[str, ...] | None]] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)

    def supports(self, operation: str) -> bool:
        return True

    async def validation_run(self, resource: str, paths: Sequence[str] | None = None) -> Any:
        self.asked.append((resource, tuple(paths) if paths else None))

        @dataclass
        class Started:
            run_id: str = "run-1"
            validations: tuple[str, ...] = ("lint",)

        return Started()

    async def validation_cancel(self, run_id: str) -> None:
        self.cancelled.append(run_id)


def settings(shot: Snapshot, **changes: Any) -> Snapshot:
    return replace(shot, settings=Settings(**changes))


def unplaced(shot: Snapshot) -> Snapshot:
    assert shot.document is not None
    return replace(shot, placement=None, document=replace(shot.document, placement=None))


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


# --- validations -------------------------------------------------------------


async def test_a_save_runs_the_saved_file_and_a_sandbox_copy_runs_nothing() -> None:
    backend = Runs()
    backend_calls, editor = calls(backend)
    feature = Validations(editor, backend_calls)
    feature.document_saved(snapshot())
    feature.document_saved(snapshot(sandbox=True))
    feature.document_saved(settings(snapshot(), run_on=RunOn.MANUAL))
    await settle()
    assert backend.asked == [("R", ("a.py",))]


async def test_a_file_saved_before_it_was_placed_runs_once_it_is_with_its_neighbours() -> None:
    backend = Runs()
    backend_calls, editor = calls(backend)
    feature = Validations(editor, backend_calls)
    for path in ("a.py", "b.py"):
        feature.document_saved(unplaced(snapshot(path=path)))
    await settle()
    assert backend.asked == []
    for path in ("a.py", "b.py"):  # a resync places them together
        feature.document_placed(snapshot(path=path))
    await settle()
    assert backend.asked == [("R", ("a.py", "b.py"))]


async def test_edits_with_run_on_change_make_one_debounced_run() -> None:
    backend = Runs()
    backend_calls, editor = calls(backend)
    feature = Validations(editor, backend_calls)
    for path in ("a.py", "b.py", "a.py"):
        feature.document_edited(settings(snapshot(path=path), run_on=RunOn.CHANGE, debounce_ms=10))
    await asyncio.sleep(0.05)
    await settle()
    assert backend.asked == [("R", ("a.py", "b.py"))]


def test_run_validations_is_offered_outside_sandboxes_only() -> None:
    backend_calls, editor = calls()
    feature = Validations(editor, backend_calls)
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier("file:///r/a.py"),
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    titles = [a.title for a in offered(snapshot(), params, [feature]) or ()]
    assert titles == ["Run validations on a.py", "Run validations on the whole resource"]
    assert offered(snapshot(sandbox=True), params, [feature]) == []


async def test_a_run_shows_as_progress_and_cancelling_it_cancels_the_run() -> None:
    backend = Runs()
    backend_calls, editor = calls(backend)
    cancels: list[Any] = []

    async def start_progress(token: str, begin: Any, on_cancel: Any) -> bool:
        editor.progress.append(("begin", token, begin.title))
        cancels.append(on_cancel)
        return True

    editor.start_progress = start_progress  # type: ignore[method-assign]
    feature = Validations(editor, backend_calls)
    workspace = snapshot()
    feature.start(workspace)
    started = ValidationStarted(
        event_id=1, at=NOW, run_id="run-1", resource_id="R", validations=("lint", "types")
    )
    feature.event(started, workspace)
    await settle()
    await cancels[0]()
    assert backend.cancelled == ["run-1"]
    summary = ValidationSummary(required_failed=1)
    done = ValidationCompleted(event_id=2, at=NOW, run_id="run-1", resource_id="R", summary=summary)
    feature.event(done, workspace)
    await settle()
    assert editor.progress == [
        ("begin", "acp-run-run-1", "Validating"),
        ("end", "acp-run-run-1", "1 failed"),
    ]
    feature.event(replace_id(started, "run-2", "OTHER"), workspace)  # not a resource in play
    await settle()
    assert len(editor.progress) == 2
    for task in editor.tasks:
        task.cancel()


def replace_id(event: ValidationStarted, run_id: str, resource_id: str) -> ValidationStarted:
    return event.model_copy(update={"run_id": run_id, "resource_id": resource_id})


# --- diagnostics -------------------------------------------------------------


async def test_changed_files_are_pushed_or_a_pull_client_asked_to_pull_again() -> None:
    source = FakeSource()
    source.roots.remember(RESOURCE)
    backend_calls, editor = calls()
    feature = Diagnostics(editor, backend_calls, source)
    feature.start(snapshot())
    changed = source.results.apply(result("lint", findings=[finding("a.py", message="m")]))
    source.documents[("R", "a.py")] = Document("file:///r/a%20b.py", 4, "x\n")
    feature.files_changed(changed)
    await settle()
    (sent,) = map(json.loads, editor.published)
    assert (sent["uri"], sent["version"]) == ("file:///r/a%20b.py", 4)
    assert [d["message"] for d in sent["diagnostics"]] == ["m"]
    pulling = Diagnostics(editor, backend_calls, source)
    pulling.start(replace(snapshot(), support=replace(snapshot().support, pull_diagnostics=True)))
    pulling.files_changed(changed)
    await settle()
    assert editor.refreshed == 1 and len(editor.published) == 1
    feature.close()
    pulling.close()


async def test_an_edit_sends_a_shown_file_again_where_its_lines_went() -> None:
    """Push: a file sent before is sent again after an unsaved edit, under the
    edit's version, its finding where its line went; a file never sent, or a
    pull client, gets nothing (a pull client asks again itself)."""
    saved = "import os\nx = 1\n"
    source = FakeSource()
    source.roots.remember(RESOURCE)
    backend_calls, editor = calls()
    feature = Diagnostics(editor, backend_calls, source)
    opened = snapshot(saved)
    feature.start(opened)
    assert opened.document is not None and opened.key is not None
    source.documents[opened.key] = opened.document
    feature.document_edited(opened)  # nothing sent yet: nothing to move
    await settle()
    assert editor.published == []
    flagged = result(
        "lint", findings=[finding("a.py", 0, 7, "m")], file_hashes={"a.py": digest(saved)}
    )
    feature.files_changed(source.results.apply(flagged))
    await settle()
    typed = edited(replace(opened, document=replace(opened.document, version=2)), "#\n" + saved)
    assert typed.document is not None
    source.documents[opened.key] = typed.document
    feature.document_edited(typed)
    await asyncio.sleep(0.06)  # the publisher's window after the first send
    sent = [json.loads(params) for params in editor.published]
    assert [
        (p["version"], [d["range"]["start"]["line"] for d in p["diagnostics"]]) for p in sent
    ] == [
        (1, [0]),
        (2, [1]),
    ]
    pulling = Diagnostics(editor, backend_calls, source)
    pulling.start(replace(opened, support=replace(opened.support, pull_diagnostics=True)))
    pulling.document_edited(typed)
    await asyncio.sleep(0.06)
    assert len(editor.published) == 2 and editor.refreshed == 0
    feature.close()
    pulling.close()


async def test_a_run_of_several_validations_is_held_back_until_it_ends() -> None:
    source = FakeSource()
    source.roots.remember(RESOURCE)
    backend_calls, editor = calls()
    feature = Diagnostics(editor, backend_calls, source)
    workspace = snapshot()
    feature.start(workspace)
    started = ValidationStarted(
        event_id=1, at=NOW, run_id="r", resource_id="R", validations=("lint", "types")
    )
    feature.event(started, workspace)
    feature.files_changed(source.results.apply(result("lint", findings=[finding("b.py")])))
    await settle()
    assert editor.published == []
    done = ValidationCompleted(
        event_id=2, at=NOW, run_id="r", resource_id="R", summary=ValidationSummary()
    )
    feature.event(done, workspace)
    await settle()
    assert len(editor.published) == 1
    feature.close()


# --- hover -------------------------------------------------------------------


@dataclass
class Inspector:
    """A backend answering ``context.inspect`` after ``delay`` seconds."""

    delay: float = 0.0
    asked: list[tuple[str, int, str | None]] = field(default_factory=list)

    def supports(self, operation: str) -> bool:
        return True

    async def context_inspect(
        self, path: str, line: int, *, text: str | None = None
    ) -> ContextInfo:
        self.asked.append((path, line, text))
        await asyncio.sleep(self.delay)
        shown = result("lint", findings=[finding("a.py", 0, 0, f"about {(text or '').strip()}")])
        here = ContextFinding(
            validation="lint",
            mode=shown.mode,
            passed=False,
            run_id=shown.run_id,
            result_id=shown.id,
            found_at=NOW,
            finding=shown.findings[0],
        )
        return ContextInfo(resource_id="R", path="a.py", line=line, findings=(here,))


async def test_hover_describes_the_snapshots_text_and_asks_once_a_line() -> None:
    backend = Inspector(delay=0.01)
    backend_calls, editor = calls(backend)
    feature = Hover(editor, backend_calls)
    shot = snapshot("x = 1\n", backend=backend)
    answer = await feature.hover(shot, types.Position(0, 1))
    assert answer is not None and isinstance(answer.contents, types.MarkupContent)
    assert "about x = 1" in answer.contents.value
    again = await feature.hover(shot, types.Position(0, 3))
    assert again is not None and len(backend.asked) == 1  # the line's answer, cached
    assert await feature.hover(replace(shot, backend=None), types.Position(0, 1)) is None


@pytest.mark.parametrize(
    "text",
    ["", "x", "a\nb\n", "a\r\nb\rc\nd", "\n" * 9000, ("é" * 5000 + "\n") * 3, "x = 1\n" * 2000],
)
def test_a_document_s_line_is_the_line_of_its_lines(text: str) -> None:
    lines = split_lines(text)
    rows = range(len(lines) + 2)
    expected = [lines[n] if n < len(lines) else "" for n in rows]
    document = Document("u", 1, text)
    assert [document.line(n) for n in rows] == expected


# --- plans: a proposal's progress follows its plan's events ------------------


async def test_a_proposed_plan_shows_progress_until_it_settles_and_says_so() -> None:
    backend_calls, editor = calls()
    feature = Plans(editor, backend_calls)
    proposed = plan(plan_id="P9").model_copy(update={"state": PlanState.PROCESSING})
    feature.progress.follow(proposed, "Proposing a fix with ruff", with_progress=True)
    await settle()
    ready = proposed.model_copy(update={"state": PlanState.COMPLETE})
    feature.event(PlanChanged(event_id=1, at=NOW, plan=ready), snapshot())
    assert editor.progress == [
        ("begin", "acp-plan-P9", "Proposing a fix with ruff"),
        ("end", "acp-plan-P9", "complete"),
    ]
    assert editor.messages() == [
        "Plan “ruff fix” is ready (a.py): preview or apply it from the code actions on those files."
    ]


def test_a_workspace_snapshot_has_no_document() -> None:
    workspace = Snapshot(
        snapshot().support, "utf-16", Settings(), None, (RESOURCE,), lambda *_: None
    )
    assert workspace.key is None and workspace.diagnostics == ()
