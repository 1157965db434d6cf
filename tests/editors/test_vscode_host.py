"""The built .vsix inside a real VS Code: code-server (npm) with its workbench
in Debian's headless Chromium, driven by Puppeteer. A test-only extension
(vscode_host/probe) opens and saves examples/demo/greetings.py as a new user
would, runs the restart command, and reports what VS Code's diagnostics API
held; acp-lsp is found by the extension itself, in the .venv of the checkout
around the folder (not on the extension host's PATH), and no setting is
touched."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from editor_harness import (
    BIN,
    VSCODE_EXTENSION,
    DemoProject,
    Finding,
    build_vscode_extension,
    require_editor,
    run_ok,
    which,
)

HOST = Path(__file__).with_name("vscode_host")
CODE_SERVER = HOST / "node_modules" / ".bin" / "code-server"
CHROMIUM = Path("/usr/bin/chromium")
VSCE = VSCODE_EXTENSION / "node_modules" / ".bin" / "vsce"
# Start to result: code-server ~5 s, the workbench and extension host ~10 s,
# the server, a validation run and a restart a few more.
HOST_TIMEOUT_S = 75
ERROR, WARNING = 0, 1  # vscode.DiagnosticSeverity


def package(extension_dir: Path, vsix: Path) -> Path:
    package_args = ["package", "--allow-missing-repository", "--skip-license", "--out", str(vsix)]
    run_ok([str(VSCE), *package_args], extension_dir, timeout=60)
    return vsix


def listening_url(log: IO[str], deadline: float) -> str:
    """code-server's address, from its log line 'HTTP server listening on URL'."""
    seen = []
    while time.monotonic() < deadline:
        line = log.readline()
        if not line:
            time.sleep(0.05)
            continue
        seen.append(line)
        found = re.search(r"HTTP server listening on (http://\S+)", line)
        if found:
            return found.group(1).rstrip("/")
    raise AssertionError("code-server never listened:\n" + "".join(seen))


@pytest.fixture(scope="module")
def code_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """code-server, Chromium and the packed extensions: (code-server, extensions dir)."""
    tmp_path = tmp_path_factory.mktemp("vscode-host")
    code_server = require_editor(CODE_SERVER, "code-server (npm, tests/editors/vscode_host)")
    require_editor(CHROMIUM, "Chromium (Debian's chromium)")
    node = require_editor(which("node"), "Node.js")
    build_vscode_extension()
    extensions = tmp_path / "vscode-extensions"
    vsixes = [
        package(VSCODE_EXTENSION, tmp_path / "acp-lsp.vsix"),
        package(HOST / "probe", tmp_path / "probe.vsix"),
    ]
    run_ok(
        [
            *(str(node), str(code_server), "--extensions-dir", str(extensions)),
            *(arg for vsix in vsixes for arg in ("--install-extension", str(vsix))),
        ],
        tmp_path,
        timeout=60,
    )
    yield code_server, extensions


def host_env(project: DemoProject) -> dict[str, str]:
    """What code-server runs with: the project's env, minus acp-lsp's bin dir on
    PATH (the extension must find the server in the folder's .venv)."""
    path = os.pathsep.join(p for p in project.env["PATH"].split(os.pathsep) if Path(p) != BIN)
    return {**project.env, "PATH": path}


def run_host(
    host: tuple[Path, Path], project: DemoProject, tmp_path: Path, *, trusted: bool = True
) -> dict[str, Any]:
    """Open the project in code-server; ``trusted`` plays the user who answers
    "Yes, I trust the authors" (else the folder stays in Restricted Mode)."""
    code_server, extensions = host
    result_file = tmp_path / "probe-result.json"
    env = {
        **host_env(project),
        "ACP_PROBE_RESULT": str(result_file),
        "ACP_PROBE_FILE": str(project.greetings),
    }
    log_path = tmp_path / "code-server.log"
    node = str(which("node"))
    with log_path.open("w+", encoding="utf-8") as log:
        server = subprocess.Popen(
            [
                node,
                str(code_server),
                *("--bind-addr", "127.0.0.1:0", "--auth", "none"),
                *("--user-data-dir", str(tmp_path / "vscode-user")),
                *("--extensions-dir", str(extensions)),
                *("--disable-telemetry", "--disable-update-check"),
                *("--disable-getting-started-override", "--ignore-last-opened"),
                *(["--disable-workspace-trust"] if trusted else []),
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            with log_path.open(encoding="utf-8") as reader:
                url = listening_url(reader, time.monotonic() + 30)
            opened = subprocess.run(
                [
                    *(node, str(HOST / "open.js"), f"{url}/?folder={project.root}"),
                    *(str(result_file), str(HOST_TIMEOUT_S * 1000)),
                ],
                cwd=HOST,
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=HOST_TIMEOUT_S + 30,
            )
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
    output = log_path.read_text(encoding="utf-8")
    assert result_file.exists(), f"{opened.stdout}{opened.stderr}\ncode-server:\n{output}"
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\ncode-server:\n{output}"
    return result


def at(shown: list[dict[str, Any]], finding: Finding, severity: int) -> str:
    """The message VS Code shows at the finding's place (UTF-16 columns) with that severity."""
    for diagnostic in shown:
        place = (diagnostic["line"], diagnostic["character"], diagnostic["severity"])
        if place == (finding.line, finding.utf16_column, severity):
            return str(diagnostic["message"])
    return ""


def test_vscode_shows_demo_diagnostics_and_restarts(
    code_server: tuple[Path, Path], demo_project: DemoProject, tmp_path: Path
) -> None:
    # As the README sets it up: acp-lsp in the .venv of the repository around
    # examples/demo (the harness makes the demo's parent a git checkout).
    venv = demo_project.root.parent / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "acp-lsp").symlink_to(BIN / "acp-lsp")

    result = run_host(code_server, demo_project, tmp_path)

    assert result["trusted"] and result["installed"] and result["activated_by_itself"], result
    expected_server = {"command": str(venv / "bin" / "acp-lsp"), "source": str(venv)}
    assert result["server"] == expected_server, result
    assert result["saved"], result
    typo, todo = demo_project.typo(), demo_project.todo()
    for step in ("before_restart", "after_restart"):
        assert "nmae" in at(result[step], typo, ERROR), (step, result)
        assert "pick the farewell" in at(result[step], todo, WARNING), (step, result)
    assert result["starts"] == 2 and result["running_after_restart"], result
    # vscode-languageclient announces pull and workspace/diagnostic/refresh.
    assert result["pulls"] is True, result


def test_vscode_keeps_the_extension_off_in_an_untrusted_folder(
    code_server: tuple[Path, Path], demo_project: DemoProject, tmp_path: Path
) -> None:
    """The manifest's untrustedWorkspaces: false, as VS Code applies it."""
    result = run_host(code_server, demo_project, tmp_path, trusted=False)
    assert result == {"trusted": False, "installed": False}, result
