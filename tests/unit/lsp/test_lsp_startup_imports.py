"""What each entry point loads (ADR 0015): ``acp-lsp --help`` parses its
arguments before anything heavy is imported, and ``acp-lsp check`` runs a
whole check without loading an LSP framework.

Each case runs in a fresh interpreter and lists the modules it ended with,
so an eager import anywhere on the path fails here, not in a stopwatch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.unit.lsp.lsp_factories import todo_project

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import contextlib, io, json, sys
from lsp_server.__main__ import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def run(*argv: str) -> tuple[object, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    answer = json.loads(done.stdout.splitlines()[-1])
    return answer["code"], set(answer["modules"])


def test_help_and_version_load_neither_the_server_nor_the_client() -> None:
    for argv in (["--help"], ["--version"], ["--tcp", "nonsense"]):
        code, modules = run(*argv)
        assert code in (0, 2)
        assert not modules & {"pygls", "lsprotocol", "cattrs", "pydantic", "httpx"}, argv


def test_check_runs_a_whole_check_without_an_lsp_framework(tmp_path: Path) -> None:
    project = todo_project(tmp_path / "project")
    data = str(tmp_path / "data")
    code, modules = run("check", "--data-dir", data, "--register", str(project))
    assert code == 0
    assert "acp_backend" in modules  # the run really happened, in this process
    assert not modules & {"pygls", "lsprotocol", "cattrs"}
