"""``{files}``: a save runs the tool on the saved file only, and the result
keeps the other files' findings from the previous run (real ruff, through
the real facade); a subscriber that asks for partial results gets only the
saved file's findings, in local mode and over HTTP + SSE (ADR 0017)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer

from acp_backend.facade import BackendFacade, create_facade
from acp_client.client import AcpClient
from acp_client.connect import connect
from acp_client.errors import AlreadyExists
from acp_client.events import ValidationCompleted, ValidationResultEvent
from acp_client.head_start import LOCAL
from acp_client.models import ValidationResult
from acp_client.operations import ValidationRunResult

# ruff through a wrapper that records the files it was given, one run a line.
TOML = """\
[[validations]]
preset = "ruff"
mode = "required"
command = ["sh", "-c", 'echo "$*" >> ../calls.log; exec ruff check --isolated \
--output-format json "$@"', "ruff", "{files}"]
cwd = "src"
"""


@pytest.fixture
async def facade(tmp_path: Path) -> AsyncIterator[BackendFacade]:
    backend = create_facade(tmp_path / "data")
    yield backend
    await backend.aclose()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "acp.toml").write_text(TOML, encoding="utf-8")
    (root / "src" / "a.py").write_text("import os\n", encoding="utf-8")
    (root / "src" / "pkg" / "b.py").write_text("label = '😀'; import sys\n", encoding="utf-8")
    (root / "src" / "notes.txt").write_text("not python\n", encoding="utf-8")
    return root


async def run(facade: BackendFacade, project: Path, *saved: str) -> ValidationResult:
    with contextlib.suppress(AlreadyExists):
        await facade.dispatch("resource.register", {"path": str(project), "name": "p"})
    params: dict[str, Any] = {"resource": "p"}
    if saved:
        params["paths"] = [str(project / path) for path in saved]
    started = ValidationRunResult.model_validate(await facade.dispatch("validation.run", params))
    assert started.started_event_id is not None
    result = None
    async for message in facade.subscribe(started.started_event_id - 1):
        if message["method"] == "validation.result":
            result = ValidationResultEvent.model_validate(message["params"]).result
        if message["method"] == "validation.completed":
            completed = ValidationCompleted.model_validate(message["params"])
            if completed.run_id == started.run_id:
                assert result is not None
                return result
    raise AssertionError("no completion")


def places(result: ValidationResult) -> list[tuple[str, int, int, str | None]]:
    return sorted(
        (f.location.path, f.location.line, f.location.character, f.code)
        for f in result.findings
        if f.location and f.code == "F401"  # the one rule these files break on purpose
    )


def calls(project: Path) -> list[str]:
    return (project / "calls.log").read_text().splitlines()


async def test_a_save_runs_the_tool_on_that_file_and_keeps_the_others(
    facade: BackendFacade, project: Path
) -> None:
    full = await run(facade, project)
    assert calls(project) == ["a.py pkg/b.py"]  # every file applies_to matches
    assert places(full) == [("src/a.py", 0, 7, "F401"), ("src/pkg/b.py", 0, 20, "F401")]

    (project / "src" / "a.py").write_text("import os\n\nprint(os.sep)\n", encoding="utf-8")
    saved = await run(facade, project, "src/a.py")
    assert calls(project)[-1] == "a.py"  # that file only
    assert places(saved) == [("src/pkg/b.py", 0, 20, "F401")]  # b.py's finding kept
    assert not saved.passed
    assert saved.message.startswith("2 findings (2 kept from files this run did not check)")
    assert saved.file_hashes.keys() == {"src/pkg/b.py"}

    (project / "src" / "pkg" / "b.py").write_text("x = 1\nimport json\n", encoding="utf-8")
    saved = await run(facade, project, "src/pkg/b.py", "src/notes.txt")
    assert calls(project)[-1] == "pkg/b.py"  # notes.txt is not ruff's
    assert places(saved) == [("src/pkg/b.py", 1, 7, "F401")]

    (project / "src" / "pkg" / "b.py").unlink()
    gone = await run(facade, project, "src/pkg/b.py")
    assert len(calls(project)) == 3  # nothing left to check: the tool did not run
    assert places(gone) == [] and gone.passed


async def test_a_save_without_a_previous_run_reports_only_what_it_covered(
    facade: BackendFacade, project: Path
) -> None:
    saved = await run(facade, project, "src/pkg/b.py")
    assert calls(project) == ["pkg/b.py"]
    assert places(saved) == [("src/pkg/b.py", 0, 20, "F401")]


@pytest.fixture(params=["local", "http+sse"])
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AcpClient]:
    server = LiveServer(tmp_path / "data").start() if request.param == "http+sse" else None
    if server is None:
        acp = await connect(LOCAL, data_dir=tmp_path / "data")
    else:
        acp = await connect(server.url, token=server.token)
    yield acp
    await acp.aclose()
    if server is not None:
        server.stop()


async def follow(client: AcpClient, partial: bool, *saved: str) -> ValidationResultEvent:
    """Run the validation (a save of ``saved``) and return its result event."""
    run_ = await client.validation_run("p", paths=saved or None)
    assert run_.started_event_id is not None
    async for event in client.events(run_.started_event_id - 1, partial=partial):
        if isinstance(event, ValidationResultEvent) and event.result.run_id == run_.run_id:
            return event
    raise AssertionError("the stream ended")


async def test_a_partial_subscriber_gets_only_the_saved_files_findings(
    client: AcpClient, project: Path
) -> None:
    await client.resource_register(str(project), name="p")
    full = (await follow(client, True)).result
    assert places(full) == [("src/a.py", 0, 7, "F401"), ("src/pkg/b.py", 0, 20, "F401")]

    (project / "src" / "a.py").write_text("import os, re\n\nprint(os.sep)\n", encoding="utf-8")
    saved = await follow(client, True, str(project / "src" / "a.py"))
    assert saved.covered == ("src/a.py",) and saved.base_result_id == full.id
    assert places(saved.result) == [("src/a.py", 0, 11, "F401")]  # b.py's is not sent
    assert not saved.result.passed  # the verdict is the whole result's

    (stored,) = await client.latest_results("p")  # what a listing returns: the whole
    assert stored.id == saved.result.id
    assert places(stored) == [("src/a.py", 0, 11, "F401"), ("src/pkg/b.py", 0, 20, "F401")]
    # The saved file's findings come first: a finding's index is the same in both.
    assert stored.findings[: len(saved.result.findings)] == saved.result.findings

    (project / "src" / "a.py").write_text("x = 1\n", encoding="utf-8")
    whole = await follow(client, False, str(project / "src" / "a.py"))
    assert whole.covered is None and whole.base_result_id is None  # as before partial results
    assert places(whole.result) == [("src/pkg/b.py", 0, 20, "F401")]
