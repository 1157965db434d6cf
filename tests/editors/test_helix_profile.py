"""Helix cannot be installed here, so its way of talking to a server is played
by a pytest-lsp client sending what Helix sends: the capabilities, clientInfo
and workspace folders transcribed from Helix's source (acp_conformance/clients/
helix_*.json say where from). Both get pushed diagnostics: Helix 25.07
cannot pull; Helix master can, and re-pulls on workspace/diagnostic/refresh,
but announces that under `workspace.diagnostic` (its lsp-types' field name)
where LSP says `workspace.diagnostics`, so a server reading the spec sees a
client that could not be told to pull again, and pushes (which Helix shows)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from editor_harness import BIN, EDITOR_TIMEOUT_S, DemoProject
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp.client import make_test_lsp_client

from acp_client.paths import path_to_uri
from acp_conformance.profiles import recorded

Shown = dict[tuple[int, int, types.DiagnosticSeverity | None], str]


def helix_sends_did_save(
    sync: types.TextDocumentSyncOptions | types.TextDocumentSyncKind | None,
) -> bool:
    """Helix's rule (Client::text_document_did_save): it announces no
    synchronization.didSave, yet sends didSave unless the server's
    textDocumentSync is absent or says save: false."""
    if sync is None:
        return False
    if isinstance(sync, types.TextDocumentSyncOptions):
        return sync.save not in (None, False)
    return True


@pytest.mark.parametrize("profile_name", ["helix_25.07.json", "helix_master.json"])
async def test_helix_profile_shows_demo_diagnostics(
    profile_name: str, demo_project: DemoProject
) -> None:
    profile = recorded(profile_name)
    capabilities = default_converter().structure(profile["capabilities"], types.ClientCapabilities)
    assert "synchronization" not in profile["capabilities"]["textDocument"]
    assert "diagnostics" not in profile["capabilities"]["workspace"]

    client = make_test_lsp_client()
    await client.start_io(str(BIN / "acp-lsp"), env=demo_project.env, cwd=demo_project.root)
    try:
        root_uri = path_to_uri(str(demo_project.root))
        answer = await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                client_info=types.ClientInfo(**profile["clientInfo"]),
                root_uri=root_uri,
                root_path=str(demo_project.root),
                # Helix names each folder after the last segment of its URI.
                workspace_folders=[types.WorkspaceFolder(root_uri, demo_project.root.name)],
            )
        )
        assert answer.capabilities.diagnostic_provider is None  # pushed, see above
        # Helix gives a file outside its workspace (a plan's sandbox copy under
        # the data dir) to the first acp-lsp when the server takes workspace
        # folders (Client::try_add_doc), instead of starting a second one.
        folders = answer.capabilities.workspace and answer.capabilities.workspace.workspace_folders
        assert folders and folders.supported and folders.change_notifications, folders
        assert answer.capabilities.position_encoding == types.PositionEncodingKind.Utf8
        assert helix_sends_did_save(answer.capabilities.text_document_sync)

        path = demo_project.greetings
        uri = path_to_uri(str(path))
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=path.read_text("utf-8")
                )
            )
        )
        client.text_document_did_save(  # at once: a save before the backend connects runs too
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

        def shown() -> Shown:
            return {
                (d.range.start.line, d.range.start.character, d.severity): d.message
                for d in client.diagnostics.get(uri, [])
            }

        error, warning = types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning
        with contextlib.suppress(TimeoutError):  # the asserts below say what is missing
            async with asyncio.timeout(EDITOR_TIMEOUT_S):
                while {severity for (_, _, severity) in shown()} < {error, warning}:
                    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

        typo, todo = demo_project.typo(), demo_project.todo()
        assert "nmae" in shown().get((typo.line, typo.utf8_column, error), ""), shown()
        assert "pick the farewell" in shown().get((todo.line, todo.utf8_column, warning), "")
        assert not [m.message for m in client.messages if "register" in m.message.lower()]

        def progress_kinds() -> list[str]:
            reports = client.progress_reports.values()
            return [report.kind for run in reports for report in run]

        with contextlib.suppress(TimeoutError):  # the run's progress ends after its results
            async with asyncio.timeout(5):
                while progress_kinds()[-1:] != ["end"]:
                    await client.wait_for_notification(types.PROGRESS)
        assert progress_kinds()[:1] == ["begin"] and progress_kinds()[-1:] == ["end"]
    finally:
        await client.shutdown_session()
        await client.stop()
