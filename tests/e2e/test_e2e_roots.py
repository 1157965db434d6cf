"""Workspace folders and documents are placed through the registry only."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.models import ValidationMode
from tests.support.factories import finding, result
from tests.support.lsp_harness import PROFILES_AND_MODES, Backend, Starter, project, uri
from tests.support.waiting import until

REQ = ValidationMode.REQUIRED


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_multi_root_with_nested_and_unregistered_folders(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    outer = project(tmp_path / "outer", {"o.py": "o\n", "inner/i.py": "i\n"})
    inner = outer / "inner"
    loose = project(tmp_path / "loose", {"l.py": "l\n", "m.py": "m\n", "acp.toml": ""})
    outer_resource = await backend.register(outer)
    inner_resource = await backend.register(inner)
    session = await lsp(profile, [outer, loose], mode=mode)

    # One message for the unregistered folder, saying how to register it.
    await until(lambda: session.messages() != [])
    (message,) = session.messages()
    assert str(loose) in message and f"acp-backend resource add {loose}" in message

    for path in (outer / "o.py", inner / "i.py", loose / "l.py", loose / "m.py"):
        session.open(path)
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem("untitled:Untitled-1", "python", 1, "x = 1\n")
        )
    )
    # The deepest root wins: inner's result lands on inner/i.py; a result
    # from outer naming the same logical path would be outer's own file.
    backend.publish(
        result("ruff", REQ, False, [finding("i.py", 0, 0, "inner")], resource=inner_resource)
    )
    backend.publish(
        result("ruff", REQ, False, [finding("o.py", 0, 0, "outer")], resource=outer_resource)
    )
    (shown,) = await session.wait_diagnostics(inner / "i.py", lambda d: len(d) == 1)
    assert shown.message == "inner"
    (shown,) = await session.wait_diagnostics(outer / "o.py", lambda d: len(d) == 1)
    assert shown.message == "outer"
    assert await session.diagnostics(loose / "l.py") == []
    assert len(session.messages()) == 1  # not one per file

    # Registered later (say from a terminal): picked up without a restart.
    loose_resource = await backend.register(loose)
    await session.wait_in_play(loose)
    backend.publish(
        result("ruff", REQ, False, [finding("l.py", 0, 0, "now")], resource=loose_resource)
    )
    (shown,) = await session.wait_diagnostics(loose / "l.py", lambda d: len(d) == 1)
    assert shown.message == "now"
    assert len(session.messages()) == 1


async def test_folder_added_later_is_resolved_and_announced_once(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    first = project(tmp_path / "first", {"a.py": "a\n"})
    added = project(tmp_path / "added", {"b.py": "b\n"})
    other = project(tmp_path / "other", {"acp.toml": ""})
    await backend.register(first)
    added_resource = await backend.register(added)
    session = await lsp("visual-studio-code", [first])
    assert session.messages() == []
    session.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[
                    types.WorkspaceFolder(uri(added), "added"),
                    types.WorkspaceFolder(uri(other), "other"),
                ],
                removed=[],
            )
        )
    )
    await session.wait_in_play(added)
    backend.publish(
        result("ruff", REQ, False, [finding("b.py", 0, 0, "late")], resource=added_resource)
    )
    await session.wait_diagnostics(added / "b.py", lambda d: len(d) == 1)
    (message,) = session.messages()
    assert str(other) in message and str(added) not in message


async def test_a_file_outside_every_folder_still_resolves(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    folder = project(tmp_path / "folder", {})
    elsewhere = project(tmp_path / "elsewhere", {"e.py": "e\n"})
    await backend.register(folder)
    resource = await backend.register(elsewhere)
    session = await lsp("emacs", [folder])
    session.open(elsewhere / "e.py")
    await session.wait_in_play(elsewhere)
    backend.publish(result("ruff", REQ, False, [finding("e.py", 0, 0, "seen")], resource=resource))
    await session.wait_diagnostics(elsewhere / "e.py", lambda d: len(d) == 1)


async def test_a_file_and_its_sandbox_copy_each_show_their_own_diagnostics(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    sandbox = project(tmp_path / "sandboxes" / "plan-1", {"a.py": "a changed\n"})
    resource = await backend.register(root)
    backend.facade.services.registry.add_sandbox_root(resource.id, str(sandbox))
    session = await lsp("neovim@v0.11", [root])
    session.open(sandbox / "a.py")
    session.open(root / "a.py")
    backend.publish(
        result("ruff", REQ, False, [finding("a.py", 0, 0, "logical")], resource=resource)
    )
    (shown,) = await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    assert shown.message == "logical"
    # The resource's results describe its own files, not a sandbox's copy.
    assert await session.diagnostics(sandbox / "a.py") == []
    assert session.messages() == []  # the sandbox is not an unregistered folder


async def test_the_unregistered_folder_message_is_true_and_only_where_validations_are_declared(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    mono = project(tmp_path / "mono", {"svc/s.py": "s\n"})
    plain = project(tmp_path / "plain", {"p.py": "p\n"})
    service = await backend.register(mono / "svc")
    session = await lsp("visual-studio-code", [mono, plain])
    await session.wait_in_play(mono / "svc")
    backend.publish(result("ruff", REQ, False, [finding("s.py", 0, 0, "shown")], resource=service))
    await session.wait_diagnostics(mono / "svc" / "s.py", lambda d: len(d) == 1)
    # Neither folder declares validations: a log line each, no message to nag with.
    assert session.messages() == []
    logged = [m.message for m in session.client.log_messages if "not in a registered" in m.message]
    (about_mono,) = [m for m in logged if str(mono) in m]
    assert "only inside its registered resource(s) svc" in about_mono
    assert "off there" not in about_mono
    assert any(str(plain) in m and "off there" in m for m in logged)


async def test_a_removed_folder_loses_its_diagnostics_and_its_updates(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    kept = project(tmp_path / "kept", {"k.py": "k\n"})
    gone = project(tmp_path / "gone", {"g.py": "g\n"})
    kept_resource = await backend.register(kept)
    gone_resource = await backend.register(gone)
    session = await lsp("neovim@v0.7", [kept, gone])
    await session.wait_in_play(gone)
    backend.publish(
        result("ruff", REQ, False, [finding("g.py", 0, 0, "g")], resource=gone_resource)
    )
    await session.wait_diagnostics(gone / "g.py", lambda d: len(d) == 1)
    session.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri(gone), "gone")]
            )
        )
    )
    await session.wait_diagnostics(gone / "g.py", lambda d: d == [])
    backend.publish(
        result("ruff", REQ, False, [finding("g.py", 0, 0, "again")], resource=gone_resource)
    )
    backend.publish(
        result("ruff", REQ, False, [finding("k.py", 0, 0, "k")], resource=kept_resource)
    )
    await session.wait_diagnostics(kept / "k.py", lambda d: len(d) == 1)
    assert await session.diagnostics(gone / "g.py") == []


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.11"])
async def test_a_workspace_opened_through_a_symlink_is_published_under_the_editors_uris(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    real = project(tmp_path / "real" / "app", {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    link = tmp_path / "link"
    link.symlink_to(real.parent, target_is_directory=True)
    resource = await backend.register(real)
    session = await lsp(profile, [link / "app"])
    await session.wait_in_play(real)
    backend.publish(
        result("ruff", REQ, False, [finding("a.py", 0, 0, "closed")], resource=resource)
    )
    await session.wait_diagnostics(link / "app" / "a.py", lambda d: len(d) == 1)
    session.open(link / "app" / "a.py")
    backend.publish(result("ruff", REQ, True, resource=resource))
    await session.wait_diagnostics(link / "app" / "a.py", lambda d: d == [])
    # Nothing was ever shown under the real path: no phantom to go stale there.
    published_to = {params.uri for _, params in session.published}
    assert published_to == {uri(link / "app" / "a.py")}
