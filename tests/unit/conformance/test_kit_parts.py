"""The conformance kit's plain parts: stdout framing, URLs, the error catalog,
the report, the shipped schema and the scratch resource."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTraceback
from lsprotocol import types

from acp_client.schema import render
from acp_conformance import schema
from acp_conformance.liar import lie
from acp_conformance.lsp_session import frame_problems, kit_converter
from acp_conformance.lying_plans import applying
from acp_conformance.options import KitOptions, base_url
from acp_conformance.profiles import plaintext_hover, profiles
from acp_conformance.report import FAIL, PASS, SKIP, Check, Report, _failure
from acp_conformance.scratch import VALIDATIONS, write_scratch

PACKAGE = Path(schema.__file__).parent


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_the_shipped_schema_is_the_contracts() -> None:
    assert (PACKAGE / "acp-schema.json").read_text(encoding="utf-8") == render(), (
        "acp_conformance/acp-schema.json is stale: run "
        "`python -m acp_client.schema > acp_conformance/acp-schema.json`"
    )


def test_clean_frames_have_no_problems() -> None:
    data = frame(b'{"jsonrpc": "2.0"}') + b"Content-Type: x\r\n" + frame(b"{}")
    assert frame_problems(data) == []


def test_stray_output_and_bad_bodies_are_named() -> None:
    data = b"hello\n" + frame(b"{}") + frame(b"not json") + b"bye"
    found = frame_problems(data)
    assert len(found) == 3, found
    assert "b'hello\\n'" in found[0] and "not JSON" in found[1] and "b'bye'" in found[2]


def test_the_url_may_end_with_the_rpc_path() -> None:
    assert base_url("http://127.0.0.1:1/acp/v1") == "http://127.0.0.1:1"
    assert base_url("http://127.0.0.1:1/acp/v1/") == "http://127.0.0.1:1"
    assert base_url("https://acp.example/") == "https://acp.example"


def test_the_server_command_is_filled_in() -> None:
    options = KitOptions(
        "server",
        "http://127.0.0.1:1",
        Path("/t"),
        "m:f",
        None,
        None,
        None,
        None,
        ("acp-lsp", "--acp", "{acp}", "--token-file", "{token_file}"),
        None,
        1.0,
    )
    argv = options.server_argv(Path("/d"))
    assert argv == ["acp-lsp", "--acp", "http://127.0.0.1:1", "--token-file", "/t"]
    assert options.server_takes_acp
    # Another backend in front (the lying relay of the plan-path check).
    assert options.server_argv(Path("/d"), "http://127.0.0.1:2")[2] == "http://127.0.0.1:2"
    local = dataclasses.replace(options, server_command=("acp-lsp", "--data-dir", "{data_dir}"))
    assert not local.server_takes_acp


def test_the_lie_moves_every_change_and_its_edits() -> None:
    at = {"path": "fixme.txt", "line": 0, "character": 0, "end_line": 0, "end_character": 4}
    change = {"path": "fixme.txt", "kind": "modify", "edits": [{"location": at, "new_text": "x"}]}
    preview = {"plan_id": "p", "changes": [change], "plan_hash": "h", "moved": ["fixme.txt"]}
    lied = lie(preview, "../out/fixme.txt")
    assert lied["changes"][0]["path"] == "../out/fixme.txt"
    assert lied["changes"][0]["edits"][0]["location"]["path"] == "../out/fixme.txt"
    assert lied["moved"] == [] and lied["plan_hash"] == "h"
    assert preview["changes"][0]["path"] == "fixme.txt"  # the true answer is left as it was


def test_the_applying_action_names_the_plan() -> None:
    apply = types.CodeAction(
        "Apply plan “x”",
        command=types.Command("t", "acp.plan.apply", arguments=[{"plan_id": "P1"}]),
    )
    preview = types.CodeAction(
        "Preview plan “x”",
        command=types.Command("t", "acp.plan.preview", arguments=[{"plan_id": "P1"}]),
    )
    other = types.CodeAction(
        "Apply plan “y”",
        command=types.Command("t", "acp.plan.apply", arguments=[{"plan_id": "P2"}]),
    )
    assert applying([preview, other, apply], "P1") is apply
    assert applying([preview, other], "P1") is None


def test_errors_are_checked_against_the_catalog() -> None:
    good = {"code": -32001, "message": "no such", "data": {"code": "OUTSIDE_ROOT", "remedy": "x"}}
    assert schema.error_problems(good, -32001) == []
    assert "expected -32602" in schema.error_problems(good, -32602)[0]
    mismatched = {"code": -32001, "message": "m", "data": {"code": "CONFLICT"}}
    assert "does not go with code -32001" in schema.error_problems(mismatched)[0]
    assert "data is missing" in schema.error_problems({"code": -32001, "message": "m"})[0]
    empty_remedy = {"code": -32010, "message": "m", "data": {"code": "CONFLICT", "remedy": ""}}
    assert "remedy" in schema.error_problems(empty_remedy)[0]


def test_schema_problems_name_the_field() -> None:
    ref = schema.methods()["resource.list"]["result"]
    assert schema.problems({"resources": []}, ref) == []
    found = schema.problems({"resources": [{"id": "x"}]}, ref)
    assert any("resources.0" in p and "'name' is a required property" in p for p in found)


def test_the_report_is_written_as_json_and_markdown(tmp_path: Path) -> None:
    report = Report("backend", "local")
    report.checks = [Check("a", PASS, "ok"), Check("b", FAIL, "x | y"), Check("c", SKIP, "n/a")]
    written = report.write(tmp_path / "out" / "report.json")
    assert [p.name for p in written] == ["report.json", "report.md"]
    data = json.loads(written[0].read_text(encoding="utf-8"))
    assert data["summary"] == {"pass": 1, "fail": 1, "skip": 1}
    assert "| `b` | fail | x \\| y |" in written[1].read_text(encoding="utf-8")
    assert report.lines()[-1] == "backend suite against local: 1 pass, 1 fail, 1 skip"


def test_the_scratch_resource_is_deterministic(tmp_path: Path) -> None:
    root = write_scratch(tmp_path / "scratch")
    declared = tomllib.loads((root / "acp.toml").read_text(encoding="utf-8"))["validations"]
    assert tuple(v["name"] for v in declared) == VALIDATIONS

    def emit(name: str) -> list[dict[str, object]]:
        out = subprocess.run(
            [sys.executable, "emit.py", name], cwd=root, capture_output=True, text=True, check=True
        ).stdout
        return [json.loads(line) for line in out.splitlines()]

    line = (root / "sample.py").read_text(encoding="utf-8").splitlines()[1]
    [required] = emit("conf-required")
    assert required["location"]["character"] == line.index("required_target")  # code points
    assert emit("conf-passing") == [] and emit("conf-toggle") == []  # toggle.txt says pass
    (root / "toggle.txt").write_text("fail\n", encoding="utf-8")
    assert len(emit("conf-toggle")) == 1
    diff = subprocess.run(
        [sys.executable, "emit.py", "--fix"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert "-this line is broken" in diff and "+this line is fixed" in diff


def test_failure_reasons_drop_only_the_assertion_prefix() -> None:
    def reason(message: str, when: str = "call") -> str:
        crash = ReprFileLocation("x.py", 1, message)
        longrepr = ReprExceptionInfo(ReprTraceback([], None, "long"), crash)
        report = pytest.TestReport("id", ("x.py", 1, "t"), {}, "failed", longrepr, when)
        return _failure(report)

    assert reason("AssertionError: wrong code\nassert False") == "wrong code"
    assert reason("acp_conformance.kit.CallFailed: plan.preview refused") == "plan.preview refused"
    assert reason("Failed: cannot reach it", "setup") == "(setup) cannot reach it"
    assert reason("NameError: name 'x'") == "NameError: name 'x'"


def test_the_wheel_ships_the_plugin_under_its_module_name() -> None:
    """The entry point's name is its module's: ``-p acp_conformance.plugin``
    then loads the installed plugin once instead of registering it twice."""
    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    entry_points = project["project"]["entry-points"]["pytest11"]
    assert entry_points == {"acp_conformance.plugin": "acp_conformance.plugin"}
    assert "acp_conformance" in project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]


def test_a_code_action_with_a_command_stays_a_code_action() -> None:
    converter = kit_converter()
    action = {"title": "Run", "command": {"title": "Run", "command": "acp.run", "arguments": []}}
    structured = converter.structure(action, types.Command | types.CodeAction)
    assert isinstance(structured, types.CodeAction)
    assert structured.command is not None and structured.command.command == "acp.run"
    command = converter.structure(
        {"title": "Run", "command": "acp.run"}, types.Command | types.CodeAction
    )
    assert isinstance(command, types.Command)


def test_a_plain_text_hover_profile_changes_only_the_hover_format() -> None:
    vscode = profiles()["vscode"]
    plain = plaintext_hover(vscode)
    assert vscode.hover_formats == ["markdown", "plaintext"]
    assert plain.hover_formats == ["plaintext"]
    assert (plain.encodings, plain.can_pull) == (vscode.encodings, vscode.can_pull)
    text, before = plain.capabilities.text_document, vscode.capabilities.text_document
    assert text is not None and before is not None and text.completion == before.completion
    assert plain.name == "vscode, plain-text hover"
