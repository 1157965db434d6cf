"""A save with ``{files}`` (ADR 0017): the language server takes in only the
saved file's findings and sends only that file again; the other files keep
theirs. Real ruff, in local mode and through ``acp-backend serve``."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_client.operations import ValidationRunResult
from tests.e2e.lsp_harness import Backend, Starter, project, uri, wait_for

TOML = """\
[[validations]]
preset = "ruff"
mode = "required"
command = ["ruff", "check", "--isolated", "--output-format", "sarif", "{files}"]
"""


@pytest.mark.parametrize("mode", ["local", "server"])
async def test_a_save_sends_only_the_saved_files_diagnostics(
    tmp_path: Path, backend: Backend, lsp: Starter, mode: str
) -> None:
    files = {"acp.toml": TOML, "a.py": "import os\n", "b.py": "import sys\n", "c.py": "x = 1\n"}
    root = project(tmp_path / "app", files)
    await backend.register(root)
    session = await lsp("neovim@v0.11", [root], mode=mode)  # push
    session.open(root / "a.py")
    await session.wait_in_play(root)
    run = ValidationRunResult.model_validate(
        await backend.facade.dispatch("validation.run", {"resource": root.name})
    )  # the full run: every file
    a, b = uri(root / "a.py"), uri(root / "b.py")
    await wait_for(lambda: {a, b} <= session.client.diagnostics.keys())
    assert [d.code for d in session.client.diagnostics[b]] == ["F401"]
    sent_before = len(session.published)

    session.save(root / "a.py", "import os\n\nprint(os.sep)\n", 2)  # fixed
    await wait_for(lambda: not session.client.diagnostics[a])
    after = [params.uri for _, params in session.published[sent_before:]]
    assert after == [a]  # b.py is not sent again: nothing changed there
    assert [d.code for d in session.client.diagnostics[b]] == ["F401"]
    (stored,) = (await backend.facade.dispatch("validation.list_results", {"resource": root.name}))[
        "results"
    ]
    assert stored["run_id"] != run.run_id  # the save's result, merged: b.py's finding kept
    assert [f["location"]["path"] for f in stored["findings"]] == ["b.py"]
