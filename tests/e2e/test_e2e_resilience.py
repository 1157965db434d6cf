"""Outages, restarts and bad events: the server answers, says so once, and
converges to the backend's state by itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.events import ValidationStarted
from acp_client.models import ValidationMode
from tests.support.factories import finding, result
from tests.support.lsp_harness import Backend, Starter, connected, project
from tests.support.servers import ServerProcess
from tests.support.waiting import until

REQ = ValidationMode.REQUIRED


@pytest.mark.parametrize("mode", ["local", "server"])
async def test_malformed_events_are_skipped(
    tmp_path: Path, backend: Backend, lsp: Starter, mode: str
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    session = await lsp("neovim@v0.11", [root], mode=mode)
    session.open(root / "a.py")
    backend.publish_raw("validation.result", {"result": {"validation": 42}})
    backend.publish_raw("validation.result", {"no": "result"})
    backend.publish_raw("something.new", {"from": "the future"})
    backend.publish(
        result("ruff", REQ, False, [finding("a.py", 0, 0, "still here")], resource=resource)
    )
    (shown,) = await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    assert shown.message == "still here"
    assert session.messages() == []  # nothing worth bothering the user with


async def test_server_mode_backend_killed_and_restarted(
    tmp_path: Path, backend: Backend, lsp: Starter, server_process: ServerProcess
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\nb\n"})
    resource = await backend.register(root)
    session = await lsp("neovim@v0.11", [root], mode="server")
    session.open(root / "a.py")
    backend.publish(
        result("ruff", REQ, False, [finding("a.py", 0, 0, "before")], resource=resource)
    )
    await session.wait_diagnostics(root / "a.py", lambda d: [x.message for x in d] == ["before"])

    server_process.kill()
    # While it is down, the results move on (another writer on the same data dir).
    backend.publish(
        result("ruff", REQ, False, [finding("a.py", 1, 0, "during")], resource=resource)
    )
    await until(lambda: len(session.messages(types.MessageType.Warning)) == 1)
    server_process.start()  # same port, a new token in the token file

    shown = await session.wait_diagnostics(
        root / "a.py", lambda d: [x.message for x in d] == ["during"]
    )
    assert shown[0].range.start.line == 1
    await until(lambda: connected(session.client, times=2))
    backend.publish(result("ruff", REQ, True, resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: d == [])
    (warning,) = session.messages(types.MessageType.Warning)
    assert "unavailable" in warning and "reconnects by itself" in warning


async def test_local_mode_falls_back_in_process_when_the_served_backend_dies(
    tmp_path: Path, backend: Backend, lsp: Starter, server_process: ServerProcess
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    server_process.start()
    session = await lsp("emacs", [root])  # discovers the served backend
    await until(lambda: connected(session.client))
    assert any("http://127.0.0.1" in m.message for m in session.client.log_messages)
    session.open(root / "a.py")
    server_process.kill()
    await until(lambda: connected(session.client, times=2), seconds=20)
    backends = [m.message for m in session.client.log_messages if "ACP backend" in m.message]
    assert "in-process" in backends[-1]
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "after")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)


async def test_backend_down_at_start_then_up(
    tmp_path: Path, backend: Backend, lsp: Starter, server_process: ServerProcess
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    server_process.token_file.write_text("not-yet\n")
    args = ["--acp", server_process.url, "--token-file", str(server_process.token_file)]
    session = await lsp("visual-studio-code", [root], args=args)
    session.open(root / "a.py")  # the editor keeps working meanwhile
    await until(lambda: len(session.messages(types.MessageType.Warning)) == 1)
    server_process.start()
    await until(lambda: connected(session.client), seconds=20)
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "up")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    assert len(session.messages(types.MessageType.Warning)) == 1
    # The token file is rewritten as the server starts: a token refused in
    # that moment is read again, not reported as a refusal.
    assert session.messages(types.MessageType.Error) == []


async def test_an_unreadable_stored_result_spoils_only_its_resource(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    good = project(tmp_path / "good", {"g.py": "g\n"})
    bad = project(tmp_path / "bad", {"b.py": "b\n"})
    good_resource = await backend.register(good)
    bad_resource = await backend.register(bad)
    backend.publish(
        result("ruff", REQ, False, [finding("g.py", 0, 0, "listed")], resource=good_resource)
    )
    backend.store_raw_result(bad_resource, "ruff", '{"not": "a result"}')
    session = await lsp("emacs", [good, bad])
    await session.wait_diagnostics(good / "g.py", lambda d: len(d) == 1)
    backend.publish(
        result("todo", REQ, False, [finding("b.py", 0, 0, "live")], resource=bad_resource)
    )
    await session.wait_diagnostics(bad / "b.py", lambda d: len(d) == 1)
    assert session.messages() == []


async def test_a_finding_beyond_lsp_positions_is_clamped_and_hides_nothing(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n", "b.py": "b\n"})
    resource = await backend.register(root)
    session = await lsp("visual-studio-code", [root])
    session.open(root / "a.py")
    await session.wait_in_play(root)  # the raw event is not stored: be listening
    huge = {"path": "a.py", "line": 2**40, "character": 10**30}
    normal = {"path": "a.py", "line": 0, "character": 0}
    raw = result("ruff", REQ, False, resource=resource).model_dump(mode="json")
    raw["findings"] = [{"location": huge, "message": "huge"}, {"location": normal, "message": "ok"}]
    backend.publish_raw("validation.result", {"at": raw["finished_at"], "result": raw})
    backend.publish(result("todo", REQ, False, [finding("b.py", 0, 0, "other")], resource=resource))
    shown = await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 2)
    assert {d.message for d in shown} == {"huge", "ok"}
    assert max(d.range.end.line for d in shown) == 2**31 - 1
    await session.wait_diagnostics(root / "b.py", lambda d: len(d) == 1)
    assert session.messages() == []  # not an outage


async def test_progress_of_a_run_whose_backend_died_ends_as_interrupted(
    tmp_path: Path, backend: Backend, lsp: Starter, server_process: ServerProcess
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\n"})
    resource = await backend.register(root)
    session = await lsp("visual-studio-code", [root], mode="server")
    client = session.client
    await until(lambda: connected(client))
    backend.publish_event(
        ValidationStarted, run_id="run-x", resource_id=resource.id, validations=("slow",)
    )
    token = "acp-run-run-x"
    await until(lambda: len(client.progress_reports.get(token, [])) == 1)
    server_process.kill()
    await until(lambda: isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd))
    end = client.progress_reports[token][-1]
    assert isinstance(end, types.WorkDoneProgressEnd) and "interrupted" in (end.message or "")


async def test_a_server_started_later_on_the_data_dir_is_shared_after_a_save(
    tmp_path: Path, backend: Backend, lsp: Starter, server_process: ServerProcess
) -> None:
    """Issue 8, item 15: local mode fell back to in-process; once `acp-backend
    serve` runs on the same data dir, the next save switches to it (no outage)."""
    root = project(tmp_path / "app", {"a.py": "a\n"})
    await backend.register(root)
    session = await lsp("neovim@v0.11", [root])
    client = session.client
    await until(lambda: connected(client))
    assert any("in-process" in m.message for m in client.log_messages)
    server_process.start()
    session.open(root / "a.py")
    session.save(root / "a.py", "a\n", 2)
    await until(
        lambda: any(f"ACP server at {server_process.url}" in m.message for m in client.log_messages)
    )
    assert session.messages(types.MessageType.Warning) == []  # a switch is not an outage
