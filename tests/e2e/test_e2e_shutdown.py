"""Shutdown with work in flight: exit code 0, no traceback in the log, and
nothing but clean messages for the editor."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from tests.support.lsp_harness import REPO, Backend, capabilities_for, connected, project, uri
from tests.support.waiting import until

# A validation still running at shutdown whose straggler (out of its process
# group, so not killed with it) holds its output open for a few seconds: the
# backend's cleanup then takes that long, and an editor's early exit comes
# while it runs.
STRAGGLER = (
    "import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
    "'import time; time.sleep(3)'], start_new_session=True)"
)
SLOW_VALIDATION = f"""\
[[validations]]
name = "slow"
mode = "required"
command = ["python3", "-c", "{STRAGGLER}; import time; time.sleep(30)"]
format = "pattern"
pattern = '^(?P<path>[^:]+):(?P<line>\\d+):(?P<column>\\d+): (?P<message>.*)$'
applies_to = ["*.py"]
"""


class ExitRecordingClient(LanguageClient):
    returncode: int | None = None

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self.returncode = server.returncode
        await super().server_exit(server)


@pytest.mark.parametrize("quitting", [False, True], ids=["exit-after-answer", "exit-at-once"])
async def test_shutdown_mid_run_is_clean(
    tmp_path: Path, backend: Backend, data_dir: Path, quitting: bool
) -> None:
    """A run in flight and the editor still answering the server's progress
    request when shutdown comes; the editor sends exit after the shutdown
    answer, or at once (as one that quits does)."""
    root = project(tmp_path / "app", {"a.py": "a\n", "acp.toml": SLOW_VALIDATION})
    await backend.register(root)
    log_file = tmp_path / "acp-lsp.log"
    client = ExitRecordingClient(converter_factory=default_converter)
    asked, answer = asyncio.Event(), asyncio.Event()

    async def create_progress(_: LanguageClient, __: types.WorkDoneProgressCreateParams) -> None:
        asked.set()
        await answer.wait()

    register_lsp_features(
        client, {**DEFAULT_CLIENT_FEATURES, types.WINDOW_WORK_DONE_PROGRESS_CREATE: create_progress}
    )
    command = [sys.executable, "-m", "lsp_server", "--data-dir", str(data_dir)]
    await client.start_io(*command, "--log-file", str(log_file), "--log-level", "INFO", cwd=REPO)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities_for("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=uri(root), name=root.name)],
        )
    )
    document = types.TextDocumentIdentifier(uri(root / "a.py"))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(document.uri, "python", 1, "a\n"))
    )
    await until(lambda: connected(client))
    client.text_document_did_save(types.DidSaveTextDocumentParams(document))
    await asyncio.wait_for(asked.wait(), 10)  # the run started; its progress is being created

    shutdown = asyncio.wrap_future(client.protocol.send_request(types.SHUTDOWN, None))
    if quitting:
        client.exit(None)
    answer.set()  # the editor's answer arrives while the server shuts down
    if not quitting:
        assert await asyncio.wait_for(shutdown, 10) is None
        client.exit(None)
    await until(lambda: client.returncode is not None)
    await client.stop()

    log = log_file.read_text(encoding="utf-8")
    assert "Traceback" not in log, log[log.find("Traceback") - 200 :]
    assert client.returncode == 0
    assert [m.message for m in client.messages if "<" in m.message or "Error" in m.message] == []
