"""The project's promise on ``examples/demo``: ruff's findings as Errors and
the TODO finder's as Warnings, at exactly the columns the tools mean, in
every editor profile; and ``acp-lsp check`` agreeing with it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from lsprotocol.types import DiagnosticSeverity as Sev

from tests.support.lsp_harness import PROFILES, REPO, Backend, Starter, uri

DEMO = REPO / "examples" / "demo"
RUFF = Path(sys.executable).parent / "ruff"


def column(line: str, code_points: int, encoding: str) -> int:
    prefix = line[:code_points]
    if encoding == "utf-8":
        return len(prefix.encode())
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def ruff_says(root: Path) -> set[tuple[str, int, int, str]]:
    """(file, 0-based line, 0-based code-point column, code), from ruff itself."""
    out = subprocess.run(
        [str(RUFF), "check", "--output-format", "json", "--no-cache", "."],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return {
        (Path(f["filename"]).name, f["location"]["row"] - 1, f["location"]["column"] - 1, f["code"])
        for f in json.loads(out)
    }


def todos_say(root: Path) -> set[tuple[str, int, int]]:
    out = subprocess.run(
        [sys.executable, "tools/find_todos.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = (line.split(":")[:3] for line in out.splitlines())
    return {(name, int(line) - 1, int(col) - 1) for name, line, col in rows}


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DEMO, tmp_path / "demo"))


@pytest.mark.parametrize("profile", PROFILES)
async def test_demo_in_every_editor(
    demo: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    await backend.register(demo)
    session = await lsp(profile, [demo])
    for name in ("greetings.py", "inventory.py"):
        session.open(demo / name)
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(demo / "greetings.py")))
    )
    ruff, todos = ruff_says(demo), todos_say(demo)
    assert len(ruff) == 6 and len(todos) == 2  # the demo's problems, as the tools see them
    shown: dict[str, list[types.Diagnostic]] = {}
    for name in ("greetings.py", "inventory.py"):
        expected = sum(1 for f in ruff if f[0] == name) + sum(1 for t in todos if t[0] == name)
        shown[name] = await session.wait_diagnostics(demo / name, lambda d, n=expected: len(d) == n)
    encoding = session.encoding
    for name, diagnostics in shown.items():
        lines = (demo / name).read_text(encoding="utf-8").splitlines()
        got_ruff = {
            (name, d.range.start.line, d.range.start.character, d.code)
            for d in diagnostics
            if d.source == "ruff"
        }
        want_ruff = {
            (n, line, column(lines[line], col, encoding), code)
            for n, line, col, code in ruff
            if n == name
        }
        assert got_ruff == want_ruff
        assert all(d.severity == Sev.Error for d in diagnostics if d.source == "ruff")
        got_todos = {
            (name, d.range.start.line, d.range.start.character)
            for d in diagnostics
            if d.source == "todos"
        }
        want_todos = {
            (n, line, column(lines[line], col, encoding)) for n, line, col in todos if n == name
        }
        assert got_todos == want_todos
        assert all(d.severity == Sev.Warning for d in diagnostics if d.source == "todos")


def test_check_on_the_demo(demo: Path, tmp_path: Path) -> None:
    def check(*args: str) -> subprocess.CompletedProcess[str]:
        data = ["--data-dir", str(tmp_path / "d")]
        command = [sys.executable, "-m", "lsp_server", "check", *data, *args]
        return subprocess.run(command, capture_output=True, text=True, cwd=demo, check=False)

    unregistered = check(str(demo))
    assert unregistered.returncode == 2 and "--register" in unregistered.stderr
    checked = check("--register", ".")
    assert checked.returncode == 1, checked.stderr
    lines = checked.stdout.splitlines()
    assert "greetings.py:5:50: error: Undefined name `nmae` [ruff]" in lines
    assert any(line.startswith("greetings.py:9:23: warning: ") for line in lines)
    assert len(lines) == 8
    again = check("--no-run", "--format", "sarif", ".")
    assert again.returncode == 1
    assert len(json.loads(again.stdout)["runs"][0]["results"]) == 8


def test_check_fix_applies_the_tools_fixes_through_a_plan(demo: Path, tmp_path: Path) -> None:
    """For CI bots: ruff's own fixes go through plan.create / preview /
    apply; what is left is reported. As ruff's --fix, the safe ones only (the
    unused import); --unsafe-fixes adds the mutable default's."""
    data = ["--data-dir", str(tmp_path / "d")]
    command = [sys.executable, "-m", "lsp_server", "check", *data, "--register", "--fix", "."]
    fixed = subprocess.run(command, capture_output=True, text=True, cwd=demo, check=False)
    assert fixed.returncode == 1, fixed.stderr  # ruff's undefined names have no fix
    assert "applied plan" in fixed.stderr and "inventory.py" in fixed.stderr, fixed.stderr
    inventory = (demo / "inventory.py").read_text()
    assert "import os\n" not in inventory
    assert "stock={}" in inventory.replace(" ", "")  # ruff calls its fix unsafe
    lines = fixed.stdout.splitlines()
    assert not any("F401" in line or "imported but unused" in line for line in lines), lines
    assert "greetings.py:5:50: error: Undefined name `nmae` [ruff]" in lines
    assert any("mutable data structures" in line for line in lines), lines

    unsafe = subprocess.run(
        [*command, "--unsafe-fixes"], capture_output=True, text=True, cwd=demo, check=False
    )
    assert "applied plan" in unsafe.stderr, unsafe.stderr
    assert "stock=None" in (demo / "inventory.py").read_text().replace(" ", "")
