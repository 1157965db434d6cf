"""Helix cannot be installed here, so its way of talking to a server is played
by a pytest-lsp client: push diagnostics only, no workspace folders (just
rootUri), and UTF-8 offered first among position encodings."""

from __future__ import annotations

import asyncio
import contextlib

from editor_harness import BIN, EDITOR_TIMEOUT_S, DemoProject
from lsprotocol import types
from pytest_lsp.client import make_test_lsp_client

from acp_client.paths import path_to_uri
from acp_conformance.profiles import HELIX as HELIX_CAPABILITIES


async def test_push_only_client_without_workspace_folders(demo_project: DemoProject) -> None:
    client = make_test_lsp_client()
    await client.start_io(str(BIN / "acp-lsp"), env=demo_project.env, cwd=demo_project.root)
    try:
        answer = await client.initialize_session(
            types.InitializeParams(
                capabilities=HELIX_CAPABILITIES,
                client_info=types.ClientInfo(name="helix"),
                root_uri=path_to_uri(str(demo_project.root)),
                root_path=str(demo_project.root),
            )
        )
        assert answer.capabilities.diagnostic_provider is None  # nothing to pull
        assert answer.capabilities.position_encoding == types.PositionEncodingKind.Utf8

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

        def shown() -> dict[tuple[int, int, types.DiagnosticSeverity | None], str]:
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
