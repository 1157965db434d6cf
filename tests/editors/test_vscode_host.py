"""The built .vsix inside a real VS Code: code-server (npm) with its workbench
in Debian's headless Chromium, driven by Puppeteer. A test-only extension
(vscode_host/probe) opens and saves examples/demo/greetings.py as a new user
would, runs the restart command, and reports what VS Code's diagnostics API
held; in another run, it asks VS Code's completion API in greetings.py and
acp.toml while Puppeteer types the same text and reads the suggest widget.
acp-lsp is found by the extension itself, in the .venv of the checkout
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
    host: tuple[Path, Path],
    project: DemoProject,
    tmp_path: Path,
    *,
    trusted: bool = True,
    probe: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Open the project in code-server; ``trusted`` plays the user who answers
    "Yes, I trust the authors" (else the folder stays in Restricted Mode).
    ``probe``: the probe's scenario and its settings (ACP_PROBE_*), besides
    the result file and greetings.py."""
    code_server, extensions = host
    result_file = tmp_path / "probe-result.json"
    env = {
        **host_env(project),
        "ACP_PROBE_RESULT": str(result_file),
        "ACP_PROBE_FILE": str(project.greetings),
        **(probe or {}),
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


def install_in_venv(project: DemoProject) -> Path:
    """As the README sets it up: acp-lsp in the .venv of the repository around
    examples/demo (the harness makes the demo's parent a git checkout)."""
    venv = project.root.parent / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "acp-lsp").symlink_to(BIN / "acp-lsp")
    return venv


def test_vscode_shows_demo_diagnostics_and_restarts(
    code_server: tuple[Path, Path], demo_project: DemoProject, tmp_path: Path
) -> None:
    venv = install_in_venv(demo_project)

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


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def test_vscode_completes_presets_and_a_findings_code(
    code_server: tuple[Path, Path], demo_project: DemoProject, tmp_path: Path
) -> None:
    """VS Code's own completion list, twice at each place: from its API
    (vscode.executeCompletionItemProvider after a workspace edit: the
    language client's provider, as the suggest widget asks it) and in the
    suggest widget while Puppeteer types, then narrows the list and takes a
    row with Enter. After `  # noqa: ` at the end of the typo's line (emoji
    before it: UTF-16 columns), the codes of ruff's findings on that line
    first, then its others; after `preset = "` in a new [[validations]]
    table of acp.toml, the presets."""
    install_in_venv(demo_project)
    typo = demo_project.typo()
    probe = {"ACP_PROBE_SCENARIO": "completion", "ACP_PROBE_LINE": str(typo.line)}
    result = run_host(code_server, demo_project, tmp_path, probe=probe)
    assert result["activated_by_itself"] and result["saved"], result
    noqa, preset = result["noqa"], result["preset"]

    # (b) The API: ruff's codes, with the typo's F821 among its line's, first.
    typed = typo.line_text + "  # noqa: "
    end = utf16_length(typed)
    assert noqa["api"]["line"] == typed, noqa
    assert noqa["api"]["position"] == {"line": typo.line, "character": end}, noqa
    codes = [item for item in noqa["api"]["items"] if item["kind"] == "Constant"]
    here = [item["label"] for item in codes if item.get("description") == "on this line"]
    assert "F821" in here and "F401" not in here, noqa  # F401 is inventory.py's
    assert [item["label"] for item in codes][: len(here)] == here, noqa
    assert "F401" in [item["label"] for item in codes], noqa
    (f821,) = [item for item in codes if item["label"] == "F821"]
    assert f821["detail"].startswith("ruff: "), f821
    assert "https://docs.astral.sh/ruff/rules/" in f821["documentation"], f821
    # Inserted at the cursor, in VS Code's UTF-16 columns.
    assert f821["insertText"] == "F821", f821
    assert f821["range"] == {"line": typo.line, "start": end, "end": end}, f821
    # The suggest widget as typed: the line's codes on top, Enter writes F821.
    assert "error" not in noqa["ui"], noqa
    rows = [row["label"] for row in noqa["ui"]["rows"]]
    assert sorted(rows[: len(here)]) == sorted(here) and "F401" in rows, noqa
    assert [row["label"] for row in noqa["ui"]["narrowed"]] == ["F821"], noqa
    assert noqa["ui"]["line"] == typed + "F821", noqa

    # (a) The API: the presets, each with what it runs and its table.
    assert preset["api"]["line"] == 'preset = "', preset
    position = preset["api"]["position"]
    presets = {
        item["label"]: item for item in preset["api"]["items"] if item["kind"] == "EnumMember"
    }
    assert {"ruff", "mypy", "eslint", "shellcheck"} <= presets.keys(), preset
    ruff = presets["ruff"]
    assert ruff["detail"].startswith("ruff check"), ruff  # ruff is installed
    assert 'name = "ruff"' in ruff["documentation"], ruff
    assert ruff["insertText"] == 'ruff"', ruff  # the quote typed, closed too
    assert ruff["range"] == {"line": position["line"], "start": 10, "end": 10}, ruff
    # The suggest widget as typed; "ru" and Enter complete the value.
    assert "error" not in preset["ui"], preset
    rows = [row["label"] for row in preset["ui"]["rows"]]
    assert {"ruff", "mypy", "eslint"} <= set(rows), preset
    assert [row["label"] for row in preset["ui"]["narrowed"]] == ["ruff"], preset
    assert preset["ui"]["line"] == 'preset = "ruff"', preset
