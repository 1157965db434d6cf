"""Settings, freshness, progress, and the read-only diagnostics path."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.events import ValidationCompleted, ValidationStarted
from acp_client.models import ValidationMode, ValidationSummary
from acp_client.operations import OPERATIONS, canonical_method
from tests.support.factories import finding, result
from tests.support.lsp_harness import Backend, Starter, connected, project, uri
from tests.support.recording_facade import PLAN_GET_SECONDS, open_gate, recorded_calls
from tests.support.waiting import until

REQ = ValidationMode.REQUIRED
RECORDING = ["--facade", "tests.support.recording_facade:create_facade"]
GATED = ["--facade", "tests.support.recording_facade:create_gated_facade"]


def warnings(messages: list[types.ShowMessageParams]) -> list[str]:
    return [m.message for m in messages if m.type == types.MessageType.Warning]


async def test_invalid_initialization_options_give_one_message_naming_the_field(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {})
    await backend.register(root)
    # neovim 0.7 cannot answer workspace/configuration: options are all it has.
    session = await lsp("neovim@v0.7", [root], options={"acp": {"runOn": "sometimes"}})
    # Said at initialized, once the settings model has loaded (ADR 0016).
    await until(lambda: warnings(session.client.messages) != [])
    (message,) = warnings(session.client.messages)
    assert "acp.runOn" in message and "default" in message


async def test_configuration_errors_and_changes(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    session = await lsp(
        "visual-studio-code",
        [root],
        options={"runOn": "manual"},
        configuration={"acp": {"clearOnEdit": "maybe"}},
    )
    client = session.client
    await until(lambda: warnings(client.messages) != [])
    (message,) = warnings(client.messages)
    assert "acp.clearOnEdit" in message and "runOn" not in message

    client.set_configuration({"acp": {"clearOnEdit": True}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await until(lambda: any("clearOnEdit=True" in m.message for m in client.log_messages))
    session.open(root / "a.py")
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "bad")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    # clearOnEdit is now on: an edit removes the (now stale) diagnostics.
    session.change(root / "a.py", "b\n", 2)
    await session.wait_diagnostics(root / "a.py", lambda d: d == [])

    client.set_configuration({"acp": {"debounceMs": "soon"}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await until(lambda: len(warnings(client.messages)) == 2)
    assert "acp.debounceMs" in warnings(client.messages)[1]


async def test_edits_keep_diagnostics_by_default(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    session = await lsp("emacs", [root], options={"runOn": "manual"})
    session.open(root / "a.py")
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "bad")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    session.change(root / "a.py", "b\n", 2)
    await asyncio.sleep(0.3)
    assert len(await session.diagnostics(root / "a.py")) == 1


async def test_runs_show_progress_and_cancelling_it_cancels_the_run(
    tmp_path: Path, backend: Backend, lsp: Starter, data_dir: Path
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    session = await lsp("visual-studio-code", [root], args=RECORDING)
    client = session.client
    await until(lambda: connected(client))  # runs started before it did are not shown
    backend.publish_event(
        ValidationStarted, run_id="run-p", resource_id=resource.id, validations=("ruff", "todo")
    )
    token = "acp-run-run-p"
    await until(lambda: len(client.progress_reports.get(token, [])) == 1)
    (begin,) = client.progress_reports[token]
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    await until(
        lambda: (
            {"method": "validation.cancel", "params": {"run_id": "run-p"}}
            in recorded_calls(data_dir)
        )
    )
    backend.publish_event(
        ValidationCompleted, run_id="run-p", resource_id=resource.id, summary=ValidationSummary()
    )
    await until(lambda: isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd))


async def test_no_progress_when_the_client_has_none_or_it_is_off(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    session = await lsp("emacs", [root], options={"progress": False})
    await until(lambda: connected(session.client))  # it sees the run start
    backend.publish_event(
        ValidationStarted, run_id="run-q", resource_id=resource.id, validations=("ruff",)
    )
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "bad")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    assert session.client.progress_reports == {}


@pytest.mark.parametrize("profile", ["visual-studio-code", "vscode-pull"])
async def test_the_diagnostics_path_never_mutates(
    tmp_path: Path, backend: Backend, lsp: Starter, data_dir: Path, profile: str
) -> None:
    """A whole session through a backend that writes down every call."""
    root = project(tmp_path / "app", {"a.py": "a\n", "b.py": "b\n"})
    loose = project(tmp_path / "loose", {"l.py": "l\n"})
    resource = await backend.register(root)
    session = await lsp(profile, [root, loose], args=RECORDING)
    client = session.client
    for path in (root / "a.py", root / "b.py", loose / "l.py"):
        session.open(path)
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "bad")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    identifier = types.TextDocumentIdentifier(uri(root / "a.py"))
    session.change(root / "a.py", "c\n", 2)
    client.text_document_did_save(types.DidSaveTextDocumentParams(identifier))
    client.text_document_did_close(types.DidCloseTextDocumentParams(identifier))
    await backend.register(loose)
    await session.wait_in_play(loose)
    backend.publish_event(
        ValidationStarted, run_id="run-r", resource_id=resource.id, validations=("ruff",)
    )
    if not session.pull:
        await until(lambda: "acp-run-run-r" in client.progress_reports)
        client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token="acp-run-run-r")
        )
    await until(lambda: "validation.run" in {c["method"] for c in recorded_calls(data_dir)})
    methods = {call["method"] for call in recorded_calls(data_dir)}
    expected = {"resource.resolve", "validation.list_results", "validation.list", "validation.run"}
    assert expected <= methods
    mutating = {m for m in methods if OPERATIONS[canonical_method(m)].mutates}
    assert mutating == set(), f"the diagnostics path called {mutating}"


async def test_run_on_save_asks_for_the_saved_file(
    tmp_path: Path, backend: Backend, lsp: Starter, data_dir: Path
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    session = await lsp("neovim@v0.11", [root], args=RECORDING)
    session.open(root / "a.py")
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(root / "a.py")))
    )
    expected = {"method": "validation.run", "params": {"resource": resource.id, "paths": ["a.py"]}}
    await until(lambda: expected in recorded_calls(data_dir))


async def test_run_on_change_is_debounced_into_one_run(
    tmp_path: Path, backend: Backend, lsp: Starter, data_dir: Path
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n", "b.py": "b\n"})
    resource = await backend.register(root)
    options = {"runOn": "change", "debounceMs": 200}
    session = await lsp("emacs", [root], options=options, args=RECORDING)
    session.open(root / "a.py")
    session.open(root / "b.py")
    await session.wait_in_play(root)
    for version in range(2, 7):
        session.change(root / "a.py", f"a{version}\n", version)
        await asyncio.sleep(0.02)
    session.change(root / "b.py", "b2\n", 2)
    runs = lambda: [c for c in recorded_calls(data_dir) if c["method"] == "validation.run"]  # noqa: E731
    await until(lambda: len(runs()) >= 1)
    await asyncio.sleep(0.4)
    (run,) = runs()
    assert run["params"] == {"resource": resource.id, "paths": ["a.py", "b.py"]}


@pytest.mark.parametrize("run_on", ["save", "change"])
async def test_saves_and_edits_before_the_backend_connects_run_once_it_has(
    tmp_path: Path, backend: Backend, lsp: Starter, data_dir: Path, run_on: str
) -> None:
    app = project(tmp_path / "app", {"a.py": "a\n", "b.py": "b\n"})
    lib = project(tmp_path / "lib", {"l.py": "l\n"})
    app_id, lib_id = (await backend.register(app)).id, (await backend.register(lib)).id
    options = {"runOn": run_on, "debounceMs": 100}
    session = await lsp("neovim@v0.11", [app, lib], options=options, args=GATED)
    paths = [app / "a.py", app / "b.py", lib / "l.py"]
    for path in paths:
        session.open(path)
    for version, path in enumerate([*paths, app / "a.py"], start=2):  # a.py twice: one run
        if run_on == "save":
            identifier = types.TextDocumentIdentifier(uri(path))
            session.client.text_document_did_save(types.DidSaveTextDocumentParams(identifier))
        else:
            session.change(path, f"edit {version}\n", version)
    # A round trip through an async handler: the server has taken in the above.
    await session.client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri(app / "a.py")))
    )
    assert recorded_calls(data_dir) == []  # the backend is not connected yet
    open_gate(data_dir)

    def runs() -> list[dict[str, object]]:
        return [c["params"] for c in recorded_calls(data_dir) if c["method"] == "validation.run"]

    await until(lambda: len(runs()) >= 2)
    await asyncio.sleep(0.3)  # and no other (a debounced run would come after 100 ms)
    assert len(runs()) == 2
    assert {run["resource"]: run["paths"] for run in runs()} == {
        app_id: ["a.py", "b.py"],
        lib_id: ["l.py"],
    }


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.11"])
async def test_a_backend_call_that_hangs_while_an_event_is_taken_delays_no_other_publish(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    """A plan's result arrives before anything said where the plan's
    sandbox is: the server asks ``plan.get``, which takes 5 s here. The
    resource's own result, right behind it, is published at once."""
    root = project(tmp_path / "app", {"a.py": "a\n", "b.py": "b\n"})
    resource = await backend.register(root)
    slow = ["--facade", "tests.support.recording_facade:create_slow_plan_get_facade"]
    session = await lsp(profile, [root], args=slow)
    session.open(root / "b.py")
    await session.wait_in_play(root)
    planned = result("lint", findings=[finding("a.py", 0, 0, "in a sandbox")], resource=resource)
    backend.publish(planned.model_copy(update={"plan_id": "01PLANNOTSEENBEFORE0000000"}))
    sent = time.monotonic()
    backend.publish(result("lint", findings=[finding("b.py", 0, 0, "now")], resource=resource))
    await session.wait_diagnostics(root / "b.py", lambda d: [x.message for x in d] == ["now"])
    assert time.monotonic() - sent < PLAN_GET_SECONDS / 2
    assert any(c["method"] == "plan.get" for c in recorded_calls(backend.data_dir))
