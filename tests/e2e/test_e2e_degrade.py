"""Degrade instead of looping (issue 8, items 10 and 11): a backend that lacks
an operation turns that feature off with one message, and a stream that keeps
failing while requests work is one outage, said once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.support.lsp_harness import Backend, Starter, project
from tests.support.recording_facade import recorded_calls
from tests.support.waiting import until

LIMITED = ["--facade", "tests.support.recording_facade:create_limited_facade"]
STREAMLESS = ["--facade", "tests.support.recording_facade:create_streamless_facade"]


async def test_a_backend_without_resource_resolve_is_degraded_not_an_outage(
    tmp_path: Path, backend: Backend, lsp: Starter, data_dir: Path
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    await backend.register(root)
    session = await lsp("visual-studio-code", [root], args=LIMITED)
    session.open(root / "a.py")
    await until(lambda: session.messages() != [])
    await asyncio.sleep(1.5)  # long enough for a reconnect loop to show itself
    (message,) = session.messages()
    assert "resource.resolve" in message and "_cleveragents" not in message
    assert "unavailable" not in message
    methods = [call["method"] for call in recorded_calls(data_dir)]
    assert "resource.resolve" not in methods  # it said it lacks it: never asked
    assert methods.count("acp.initialize") == 1  # connected once, no reconnect loop
    # The server keeps answering the editor.
    report = (
        await session.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier("file:///x.py")
            )
        )
        if session.pull
        else None
    )
    assert report is None or report.items == []


async def test_a_stream_that_keeps_failing_is_said_once_and_backed_off(
    tmp_path: Path, backend: Backend, lsp: Starter, data_dir: Path
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    await backend.register(root)
    session = await lsp("neovim@v0.11", [root], args=STREAMLESS)
    await until(lambda: session.messages(types.MessageType.Warning) != [])
    await asyncio.sleep(3)
    (warning,) = session.messages(types.MessageType.Warning)
    assert "unavailable" in warning
    connects = [c for c in recorded_calls(data_dir) if c["method"] == "acp.initialize"]
    # Backing off (0.2 s doubling), not reconnecting every few hundred ms for 3 s.
    assert 2 <= len(connects) <= 6
