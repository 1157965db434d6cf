"""A save with ``{files}`` (ADR 0017): the language server takes in only the
saved file's findings and sends only that file again; the other files keep
theirs. Real ruff, in local mode and through ``acp-backend serve``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from acp_client.events import ValidationResultEvent
from acp_client.models import ValidationMode
from acp_client.operations import ValidationRunResult
from tests.support.factories import finding, result
from tests.support.lsp_harness import Backend, Starter, project, uri
from tests.support.waiting import until

TOML = """\
[[validations]]
preset = "ruff"
mode = "required"
command = ["ruff", "check", "--isolated", "--output-format", "json", "{files}"]
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
    await until(lambda: {a, b} <= session.client.diagnostics.keys())
    assert [d.code for d in session.client.diagnostics[b]] == ["F401"]
    sent_before = len(session.published)

    session.save(root / "a.py", "import os\n\nprint(os.sep)\n", 2)  # fixed
    # The save's run, once the server has taken in its end: a.py may be sent
    # before that too (the edit, the save), so emptied is not proof of it.
    stored = await stored_after(backend, root.name, run.run_id)
    token = f"acp-run-{stored['run_id']}"
    await until(
        lambda: any(
            isinstance(report, types.WorkDoneProgressEnd)
            for report in session.client.progress_reports.get(token, ())
        )
    )
    await until(lambda: not session.client.diagnostics[a])
    after = {params.uri for _, params in session.published[sent_before:]}
    assert after == {a}  # b.py is not sent again: nothing changed there
    assert [d.code for d in session.client.diagnostics[b]] == ["F401"]
    # The save's result, merged: b.py's finding kept.
    assert [f["location"]["path"] for f in stored["findings"]] == ["b.py"]


async def stored_after(backend: Backend, resource: str, run_id: str) -> dict[str, Any]:
    """The resource's one stored result, once a run other than ``run_id`` made it."""
    deadline = time.monotonic() + 10.0
    while True:
        listed = await backend.facade.dispatch("validation.list_results", {"resource": resource})
        (stored,) = listed["results"]
        if stored["run_id"] != run_id:
            return dict(stored)
        assert time.monotonic() < deadline, "the save's run stored no result"
        await asyncio.sleep(0.02)


async def test_a_partial_result_it_cannot_continue_is_caught_up_by_listing(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    """The result shown is not the one the event continues (an event was
    missed): the server lists the whole result instead of guessing."""
    root = project(tmp_path / "app", {"a.py": "x\n", "b.py": "y\n"})
    resource = await backend.register(root)
    session = await lsp("neovim@v0.11", [root])
    session.open(root / "a.py")
    await session.wait_in_play(root)
    req = ValidationMode.REQUIRED
    backend.publish(result("lint", req, False, [finding("a.py", 0, 0, "first")], resource=resource))
    a, b = uri(root / "a.py"), uri(root / "b.py")
    await until(lambda: [d.message for d in session.client.diagnostics.get(a, ())] == ["first"])
    # Stored whole: a.py's new finding and b.py's from a result this session never saw.
    whole = result(
        "lint",
        req,
        False,
        [finding("a.py", 0, 0, "new"), finding("b.py", 0, 0, "b")],
        resource=resource,
    )
    backend.facade.services.store.insert_result(whole)
    partial = whole.model_copy(update={"findings": whole.findings[:1]})
    backend.publish_event(
        ValidationResultEvent, result=partial, covered=("a.py",), base_result_id="missed"
    )

    # Both files arrive, in either order: a.py was sent moments ago, so its
    # next publish waits for the end of its coalescing window; b.py's does not.
    def messages() -> dict[str, list[str]]:
        return {u: [d.message for d in session.client.diagnostics.get(u, ())] for u in (a, b)}

    await until(lambda: messages() == {a: ["new"], b: ["b"]})
