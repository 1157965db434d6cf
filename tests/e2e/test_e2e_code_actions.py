"""Code actions in every editor profile, local and server mode: a finding's
own fix offered on its diagnostic, resolved (or run as a command) into a
versioned edit the editor applies, and never applied over a buffer that
moved."""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import replace
from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.models import (
    FindingFix,
    Location,
    Resource,
    TextEdit,
    ValidationMode,
    ValidationResult,
)
from lsp_server.commands import COMMANDS, FIX_ALL_KIND
from tests.e2e.editing import Buffers
from tests.support.edit_text import apply_edits
from tests.support.factories import finding, result
from tests.support.lsp_harness import (
    PROFILES,
    PROFILES_AND_MODES,
    WAIT,
    Backend,
    Session,
    Starter,
    connected,
    project,
    uri,
)
from tests.support.waiting import until

SOURCE = "import os\nx = 1\n"


def unused_import(resource: Resource, text: str = SOURCE) -> ValidationResult:
    whole_line = Location(path="a.py", line=0, character=0, end_line=1, end_character=0)
    fix = FindingFix(
        description="Remove unused import: `os`",
        edits=(TextEdit(location=whole_line, new_text=""),),
    )
    flagged = finding("a.py", 0, 7, "`os` imported but unused", end_line=0, end_character=9)
    shown = result("ruff", ValidationMode.REQUIRED, False, [flagged], resource=resource)
    return shown.model_copy(
        update={
            "findings": (replace(flagged, fixes=(fix,)),),
            "file_hashes": {"a.py": hashlib.sha256(text.encode()).hexdigest()},
        }
    )


async def actions_at(
    session: Session, path: Path, line: int, character: int, only: list[str] | None = None
) -> list[types.CodeAction]:
    diagnostics = [
        d for d in await session.diagnostics(path) if d.range.start.line <= line <= d.range.end.line
    ]
    answer = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri(path)),
            range=types.Range(types.Position(line, character), types.Position(line, character)),
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )
    return [a for a in answer or () if isinstance(a, types.CodeAction)]


async def choose(buffers: Buffers, action: types.CodeAction) -> None:
    """What the editor does when the user picks ``action``."""
    client = buffers.session.client
    if action.edit is None and action.data is not None:
        action = await client.code_action_resolve_async(action)
    if action.edit is not None:
        # The editor applies a resolved edit itself: through the same buffers.
        buffers.apply(types.ApplyWorkspaceEditParams(edit=action.edit))
    if action.command is not None:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=action.command.command, arguments=action.command.arguments
            )
        )


async def started(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> tuple[Path, Resource, Session, Buffers]:
    root = project(tmp_path / "app", {"a.py": SOURCE})
    resource = await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    buffers = Buffers(session)
    buffers.open(root / "a.py")
    await session.wait_in_play(root)
    return root, resource, session, buffers


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_fix_with_the_tool_on_its_diagnostic(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root, resource, session, buffers = await started(tmp_path, backend, lsp, profile, mode)
    assert session.capabilities.code_action_provider is not None
    provider = session.capabilities.execute_command_provider
    assert provider is not None and sorted(provider.commands) == sorted(COMMANDS)
    backend.publish(unused_import(resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    actions = await actions_at(session, root / "a.py", 0, 0)  # the line, not the name: Neovim
    fixes = [a for a in actions if a.title.startswith("Fix with ruff")]
    assert [a.title for a in fixes] == ["Fix with ruff: Remove unused import: `os`"]
    (fix,) = fixes
    assert fix.is_preferred and fix.kind == types.CodeActionKind.QuickFix
    assert fix.diagnostics and fix.diagnostics[0].data["validation"] == "ruff"
    await choose(buffers, fix)
    assert buffers.text(root / "a.py") == "x = 1\n"
    assert (root / "a.py").read_text() == SOURCE  # the editor's buffer, not the disk


@pytest.mark.parametrize("profile", ["visual-studio-code", "emacs"])
async def test_a_fix_never_lands_on_a_buffer_that_moved(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    root, resource, session, buffers = await started(tmp_path, backend, lsp, profile, "local")
    backend.publish(unused_import(resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    (fix,) = [a for a in await actions_at(session, root / "a.py", 0, 8) if "Fix with" in a.title]
    # The user types before choosing: the finding no longer fits the text.
    buffers.type(root / "a.py", "import sys, os\nx = 1\n")
    await choose(buffers, fix)
    assert buffers.text(root / "a.py") == "import sys, os\nx = 1\n"
    offered = [a for a in await actions_at(session, root / "a.py", 0, 8) if "Fix with" in a.title]
    assert all(a.disabled is not None for a in offered)  # shown greyed out at most, with why


@pytest.mark.parametrize(
    ("profile", "mode"), [("visual-studio-code", "local"), ("emacs", "server")]
)
async def test_fix_all_and_run_validations(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root, resource, session, buffers = await started(tmp_path, backend, lsp, profile, mode)
    backend.publish(unused_import(resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    (fix_all,) = await actions_at(session, root / "a.py", 1, 0, [FIX_ALL_KIND])
    assert fix_all.title == "Fix all: 1 problem the tools can fix"
    await choose(buffers, fix_all)
    assert buffers.text(root / "a.py") == "x = 1\n"
    actions = await actions_at(session, root / "a.py", 0, 0)
    run = next(a for a in actions if a.title == "Run validations on a.py")
    assert run.command is not None
    answer = await session.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=run.command.command, arguments=run.command.arguments)
    )
    # The project declares no validation: one clear message, no failed request.
    assert answer is None
    await until(lambda: any("declares no validations" in m for m in session.messages()))


async def test_a_bad_command_is_an_error_not_a_crash(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    _, _, session, _ = await started(tmp_path, backend, lsp, "visual-studio-code", "local")
    with pytest.raises(Exception, match="bad arguments"):
        await session.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="acp.applyPlan", arguments=[{"nope": 1}])
        )
    assert apply_edits("ab", [], "utf-16") == "ab"


async def test_a_backend_without_plans_still_offers_the_tools_fixes(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    """Plans are a degraded feature there, said once, never an outage; what
    needs them (Propose fix) is not offered."""
    toml = '[[validations]]\nname = "ruff"\nmode = "required"\ncommand = ["python", "-c", ""]\n'
    toml += 'fix = ["python", "-c", ""]\n'
    root = project(tmp_path / "app", {"a.py": SOURCE, "acp.toml": toml})
    resource = await backend.register(root)
    planless = ["--facade", "tests.support.recording_facade:create_planless_facade"]
    session = await lsp("visual-studio-code", [root], args=planless)
    buffers = Buffers(session)
    buffers.open(root / "a.py")
    await session.wait_in_play(root)
    backend.publish(unused_import(resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    titles = [a.title for a in await actions_at(session, root / "a.py", 0, 8)]
    assert "Fix with ruff: Remove unused import: `os`" in titles
    assert not [t for t in titles if "plan" in t]  # neither plans nor Propose fix
    assert not [m for m in session.messages() if "unavailable" in m]
    await until(lambda: any("plan.list" in m for m in session.messages()))
    (said,) = [m for m in session.messages() if "plan.list" in m]
    assert "not offered as code actions" in said
    assert connected(session.client, times=1) and not connected(session.client, times=2)


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.11", "emacs"])
async def test_a_file_saved_with_a_bom_gets_its_fixes_and_plans_as_without_one(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    """Windows editors save a UTF-8 BOM; every editor drops it from the
    buffer it sends. The tool read the file with it: same file, same offers."""
    root = project(tmp_path / "app", {})
    (root / "a.py").write_bytes(b"\xef\xbb\xbf" + SOURCE.encode())
    resource = await backend.register(root)
    session = await lsp(profile, [root])
    buffers = Buffers(session)
    buffers.open(root / "a.py", SOURCE)  # as the editor holds it: no BOM
    await session.wait_in_play(root)
    shown = unused_import(resource, "\ufeff" + SOURCE)  # hashed as on disk, with the BOM
    backend.publish(shown)
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    titles = [a.title for a in await actions_at(session, root / "a.py", 0, 8)]
    assert "Fix with ruff: Remove unused import: `os`" in titles
    (fix_all,) = await actions_at(session, root / "a.py", 1, 0, [FIX_ALL_KIND])
    assert fix_all.title == "Fix all: 1 problem the tools can fix"
    await choose(buffers, fix_all)
    assert buffers.text(root / "a.py") == "x = 1\n"

    # A plan from the same fix: previewed and applied through the editor.
    buffers.type(root / "a.py", SOURCE)  # undone: the buffer is the file again
    raw = await backend.facade.dispatch(
        "plan.create",
        {
            "resource": resource.id,
            "title": "Drop os",
            "findings": [{"result_id": shown.id, "finding": 0}],
        },
    )
    assert raw["state"] == "complete"
    deadline = time.monotonic() + WAIT
    while not (
        found := [
            a
            for a in await actions_at(session, root / "a.py", 0, 0)
            if a.title.startswith("Apply plan “Drop os”")
        ]
    ):
        assert time.monotonic() < deadline, "the plan was never offered"
        await asyncio.sleep(0.05)
    await choose(buffers, found[0])
    await until(lambda: any("Applied plan “Drop os”" in m for m in session.messages()))
    assert buffers.text(root / "a.py") == "x = 1\n"
    assert not [m for m in session.messages() if "unsaved" in m or "CONFLICT" in m]


@pytest.mark.parametrize("profile", PROFILES)
async def test_unsaved_edits_move_the_diagnostics_the_editor_shows(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    """Edited after the results came (no run in flight): a push client is
    sent the file again, placed on the buffer and under its new version; a
    pull client's next pull has it. A finding whose line changed leaves."""
    root, resource, session, buffers = await started(tmp_path, backend, lsp, profile, "local")
    backend.publish(unused_import(resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)

    def lines(shown: list[types.Diagnostic]) -> list[int]:
        return [d.range.start.line for d in shown]

    buffers.type(root / "a.py", "# typed above\n" + SOURCE)
    await session.wait_diagnostics(root / "a.py", lambda d: lines(d) == [1])
    if not session.pull:
        versions = [p.version for _, p in session.published if p.uri == uri(root / "a.py")]
        assert versions[-1] == buffers.versions[uri(root / "a.py")], versions
    buffers.type(root / "a.py", "# typed above\nimport os, sys\nx = 1\n")
    await session.wait_diagnostics(root / "a.py", lambda d: d == [])


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.11", "emacs"])
async def test_a_fix_survives_unrelated_unsaved_edits_and_lands_where_its_line_went(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    root, resource, session, buffers = await started(tmp_path, backend, lsp, profile, "local")
    backend.publish(unused_import(resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    buffers.type(root / "a.py", "# typed above\n" + SOURCE + "y = 2  # and below\n")
    (fix,) = [a for a in await actions_at(session, root / "a.py", 1, 8) if "Fix with" in a.title]
    await choose(buffers, fix)
    assert buffers.text(root / "a.py") == "# typed above\nx = 1\ny = 2  # and below\n"
