"""``acp-lsp check``: output formats, and exit status 2 cases against the real backend."""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acp_client.client import AcpClient
from acp_client.models import Finding, Location, Resource, ValidationMode
from acp_client.transport.inprocess import InProcessTransport
from lsp_server.cli_check import Scope, collect, main, render, run_and_wait
from tests.support.factories import finding, result
from tests.unit.lsp.lsp_factories import todo_project

RESOURCE = Resource(id="R", name="app", root="/w/app", created_at=datetime.now(UTC))


def scopes(*paths: str) -> dict[str, Scope]:
    return {"R": Scope(RESOURCE, list(paths) or ["/w/app"])}


def test_text_lines_are_one_based_with_severity_and_validation() -> None:
    results = [
        result("ruff", findings=[finding("a.py", 2, 7, "`os` imported but unused", code="F401")]),
        result("todo", ValidationMode.INFORMATIONAL, findings=[finding("b.py", 0, 0, "TODO")]),
        result("types", passed=True, findings=[finding("a.py", 0, 0, "not shown")]),
    ]
    lines, failed = collect(results, scopes())
    assert failed == ["ruff"]
    assert render(lines, "text").splitlines() == [
        "/w/app/a.py:3:8: error: `os` imported but unused [ruff]",
        "/w/app/b.py:1:1: warning: TODO [todo]",
    ]


def test_scope_limits_lines_and_the_verdict() -> None:
    results = [result("ruff", findings=[finding("a.py", 0, 0, "in a")])]
    lines, failed = collect(results, scopes("/w/app/b.py"))
    assert lines == [] and failed == []


def test_location_less_failure_is_anchored_and_counts() -> None:
    declared = Location(path="acp.toml", line=4, character=0)
    results = [result("tests", message="2 failed", declared_at=declared)]
    lines, failed = collect(results, scopes("/w/app/src"))
    assert render(lines, "text") == "/w/app/acp.toml:5:1: error: 2 failed [tests]\n"
    assert failed == ["tests"]


def test_json_and_sarif() -> None:
    results = [
        result(
            "ruff",
            findings=[finding("a.py", 0, 3, "m", code="E1", end_line=0, end_character=5)],
        ),
        result(
            "note", ValidationMode.INFORMATIONAL, passed=True, findings=[Finding(message="fyi")]
        ),
    ]
    lines, _ = collect(results, scopes())
    (first, second) = json.loads(render(lines, "json"))
    assert first["path"] == "/w/app/a.py" and (first["line"], first["column"]) == (1, 4)
    assert first["end_column"] == 6 and first["code"] == "E1" and first["severity"] == "error"
    assert second["severity"] == "hint" and second["path"] == "/w/app/acp.toml"
    sarif = json.loads(render(lines, "sarif"))
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    assert [r["level"] for r in run["results"]] == ["error", "note"]
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 1, "startColumn": 4, "endLine": 1, "endColumn": 6}


def test_missing_path_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nope"), "--data-dir", str(tmp_path / "data")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_unregistered_path_is_exit_2_with_the_way_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "loose").mkdir()
    assert main([str(tmp_path / "loose"), "--data-dir", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err
    assert "not in a registered resource" in err
    assert f"acp-backend resource add {tmp_path / 'loose'}" in err and "--register" in err


def test_unreachable_backend_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("ACP_TOKEN", "t")
    assert main([str(tmp_path), "--acp", f"http://127.0.0.1:{port}"]) == 2
    assert "could not be reached" in capsys.readouterr().err


async def test_a_run_is_waited_for_by_its_events_not_by_listing_results(tmp_path: Path) -> None:
    project = todo_project(tmp_path / "project", "sleep 0.3; grep -Hn TODO a.txt")
    transport = InProcessTransport.load(data_dir=tmp_path / "data")
    calls: list[str] = []
    call = transport.call

    async def counted(method: str, params: Mapping[str, Any]) -> Any:
        calls.append(method)
        return await call(method, params)

    transport.call = counted  # type: ignore[method-assign]
    async with AcpClient(transport) as client:
        await client.initialize("test", "0")
        resource = await client.resource_register(str(project))
        (found,) = await run_and_wait(client, Scope(resource, [str(project)]), [])
    assert found.validation == "todo" and [f.message for f in found.findings] == ["TODO two"]
    assert "validation.list_results" not in calls
