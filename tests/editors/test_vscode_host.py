"""The built .vsix inside a real VS Code: code-server (npm) with its workbench
in Debian's headless Chromium, driven by Puppeteer. A test-only extension
(vscode_host/probe) opens and saves examples/demo/greetings.py as a new user
would, runs the restart command, and reports what VS Code's diagnostics API
held; in another run, it asks VS Code's completion API in greetings.py and
acp.toml while Puppeteer types the same text and reads the suggest widget;
in another, it lists workspace symbols, hovers a finding (API and hover
widget), picks "Fix with ruff" in the quick-fix widget and undoes it, and
applies a plan through VS Code's Refactor Preview. acp-lsp is found by the
extension itself, in the .venv of the checkout around the folder (not on
the extension host's PATH) or in the interpreter selected in the Python
extension, and no setting is touched; with acp-lsp nowhere, the
notification's "Install in the selected interpreter" installs it and the
server starts. The Python extension is a stand-in (vscode_host/python_stub)
with the part of its public API the extension uses."""

from __future__ import annotations

import difflib
import json
import os
import re
import signal
import subprocess
import sys
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
    make_demo_project,
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
        package(HOST / "python_stub", tmp_path / "python-stub.vsix"),
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
        "ACP_PROBE_BACKEND": str(BIN / "acp-backend"),
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


# --- a quick fix, hover, workspace symbols and a plan, in one run ------------

PLAN_TITLE = "Catch Exception, not everything"
BARE_EXCEPT, CAUGHT = "    except:\n", "    except Exception:\n"
FIX_TITLE = "Fix with ruff: Remove unused import: `os`"


def selected_interpreter(tmp_path: Path, *, with_server: bool) -> Path:
    """The interpreter the Python extension (the stand-in) has selected:
    a folder of its own, with acp-lsp beside it or not."""
    bin_dir = tmp_path / "selected-env" / "bin"
    bin_dir.mkdir(parents=True)
    if with_server:
        (bin_dir / "python").symlink_to(Path(sys.executable))
        (bin_dir / "acp-lsp").symlink_to(BIN / "acp-lsp")
    return bin_dir / "python"


def propose_plan(project: DemoProject, tmp_path: Path) -> str:
    """As an agent would, with the backend's CLI: a plan that catches
    Exception in inventory.py's load(); returns its id."""
    inventory = project.root / "inventory.py"
    text = inventory.read_text(encoding="utf-8")
    assert BARE_EXCEPT in text
    diff = "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            text.replace(BARE_EXCEPT, CAUGHT).splitlines(keepends=True),
            "a/inventory.py",
            "b/inventory.py",
        )
    )
    diff_file = tmp_path / "catch-exception.diff"
    diff_file.write_text(diff, encoding="utf-8")
    created = run_ok(
        [
            *(str(BIN / "acp-backend"), "--data-dir", str(project.data_dir)),
            *("plan", "create", "demo", "--diff", str(diff_file), "--title", PLAN_TITLE),
        ],
        project.root,
        timeout=30,
    )
    found = re.search(r"^plan (\S+):", created.stdout, re.MULTILINE)
    assert found, created.stdout
    return found.group(1)


def backend_plans(project: DemoProject) -> list[dict[str, Any]]:
    listed = run_ok(
        [str(BIN / "acp-backend"), "--data-dir", str(project.data_dir), "plan", "list", "--json"],
        project.root,
        timeout=30,
    )
    plans: list[dict[str, Any]] = json.loads(listed.stdout)["plans"]
    return plans


@pytest.fixture(scope="module")
def actions_run(
    code_server: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[DemoProject, dict[str, Any], Path]:
    """One code-server run of the probe's "actions" scenario, asserted by the
    tests below: acp-lsp in the checkout's .venv and in the selected
    interpreter's folder, and a plan proposed before the editor opens."""
    tmp_path = tmp_path_factory.mktemp("vscode-actions")
    project = make_demo_project(tmp_path)
    install_in_venv(project)
    interpreter = selected_interpreter(tmp_path, with_server=True)
    plan_id = propose_plan(project, tmp_path)
    probe = {
        "ACP_PROBE_SCENARIO": "actions",
        "ACP_PYTHON_STUB_INTERPRETER": str(interpreter),
        "ACP_PROBE_PLAN_LINE_TEXT": BARE_EXCEPT.strip(),
        "ACP_PROBE_PLAN_TITLE": PLAN_TITLE,
    }
    result = run_host(code_server, project, tmp_path, probe=probe)
    assert result["activated_by_itself"] and result["saved"], result
    result["plan_id"] = plan_id
    return project, result, interpreter


def test_vscode_takes_the_python_extensions_selected_interpreter_first(
    actions_run: tuple[DemoProject, dict[str, Any], Path],
) -> None:
    """acp-lsp is in the checkout's .venv too, but the interpreter the user
    selected in the Python extension wins, as it would for a Python tool."""
    _, result, interpreter = actions_run
    assert result["server"] == {
        "command": str(interpreter.parent / "acp-lsp"),
        "source": "the Python extension's selected interpreter",
    }, result


def unused_import(result: dict[str, Any]) -> dict[str, Any]:
    (found,) = [d for d in result["diagnostics"] if d["code"] == "F401"]
    return found


def test_vscode_lists_the_validation_among_workspace_symbols(
    actions_run: tuple[DemoProject, dict[str, Any], Path],
) -> None:
    project, result, _ = actions_run
    (ruff,) = [s for s in result["symbols"] if s["name"] == "ruff"]
    assert ruff["kind"] == "Event", ruff
    assert Path(ruff["path"]) == project.root / "acp.toml", ruff
    lines = (project.root / "acp.toml").read_text(encoding="utf-8").splitlines()
    named = lines.index('name = "ruff"')
    assert ruff["line"] == max(i for i in range(named) if lines[i] == "[[validations]]"), ruff


def test_vscode_hovers_a_finding_in_the_api_and_the_hover_widget(
    actions_run: tuple[DemoProject, dict[str, Any], Path],
) -> None:
    """The hover at ruff's F401: its message, rule and link, through
    vscode.executeHoverProvider and in the editor's hover widget
    (editor.action.showHover), next to VS Code's own problem part."""
    _, result, _ = actions_run
    assert unused_import(result)["severity"] == ERROR, result["diagnostics"]
    hover = result["hover"]
    (markdown,) = [part for parts in hover["api"] for part in parts if "from **ruff**" in part]
    assert "**Error** from **ruff** (required)" in markdown, markdown
    assert "`os` imported but unused" in markdown, markdown
    assert "Rule: [F401](<https://docs.astral.sh/ruff/rules/unused-import>)" in markdown, markdown
    # The fixes the menu offers, named as its titles name them (issue 26, item 5).
    assert "quick fix: **Fix with ruff**" in markdown, markdown
    assert "**Propose fix with ruff** (as a plan)" in markdown, markdown
    assert "error" not in hover["ui"], hover
    parts = hover["ui"]["parts"]
    (shown,) = [p for p in parts if p["kind"] == "markdown" and "Error from ruff" in p["text"]]
    assert "os imported but unused" in shown["text"], parts
    assert "Rule: F401" in shown["text"], parts
    assert "https://docs.astral.sh/ruff/rules/unused-import" in shown["links"], parts
    # VS Code's problem part shows the diagnostic itself.
    assert any(p["kind"] == "marker" and "imported but unused" in p["text"] for p in parts), parts


def test_vscode_applies_ruffs_quick_fix_from_the_widget_and_undoes_it(
    actions_run: tuple[DemoProject, dict[str, Any], Path],
) -> None:
    """The code actions on the F401 diagnostic through VS Code's API (the
    fix's edit resolved), then "Fix with ruff" picked with a click in the
    quick-fix widget (Ctrl+.): the import goes from the buffer, unsaved, and
    the editor's undo brings it back, clean again."""
    _, result, _ = actions_run
    fix = result["quickfix"]
    before = fix["before"]
    assert "import os\n" in before
    titles = [action["title"] for action in fix["api"]]
    (ruff_fix,) = [a for a in fix["api"] if a["title"] == FIX_TITLE]
    assert ruff_fix["kind"] == "quickfix" and ruff_fix["preferred"], ruff_fix
    line = before.splitlines().index("import os")
    ((edited,),) = [entry["edits"] for entry in ruff_fix["edit"]]
    assert edited["start"] == {"line": line, "character": 0}, ruff_fix
    assert edited["end"] == {"line": line + 1, "character": 0} and edited["newText"] == "", ruff_fix
    assert "Propose fix with ruff (as a plan)" in titles, titles
    # The widget as the user sees it, and the row clicked.
    assert "error" not in fix["ui"], fix["ui"]
    rows = [row["title"] for row in fix["ui"]["rows"]]
    assert FIX_TITLE in rows, rows
    assert fix["ui"]["chosen"] == FIX_TITLE, fix["ui"]
    assert fix["fixed"] == {"text": before.replace("import os\n", "", 1), "dirty": True}, fix
    assert fix["undone"] == {"text": before, "dirty": False}, fix


def test_vscode_applies_a_plan_through_the_refactor_preview(
    actions_run: tuple[DemoProject, dict[str, Any], Path],
) -> None:
    """The plan's "Apply plan …" picked with a click in the refactor menu
    (editor.action.refactor): the server's workspace/applyEdit carries a
    change annotation that needs confirmation, so VS Code shows its Refactor
    Preview, with the changes unchecked; ticked and Apply pressed there, the
    buffer holds the plan, VS Code saves it, the server says so and the
    backend records the plan as applied."""
    project, result, _ = actions_run
    plan = result["plan"]
    before = plan["before"]
    assert "error" not in plan["ui"], plan["ui"]
    rows = [row["title"] for row in plan["ui"]["rows"]]
    (apply_row,) = [row for row in rows if row.startswith(f"Apply plan “{PLAN_TITLE}”")]
    assert apply_row.endswith(f"(1 file, #{result['plan_id'][-4:]})"), apply_row
    assert plan["ui"]["chosen"] == apply_row, plan["ui"]
    assert any(row.startswith(f"Preview plan “{PLAN_TITLE}”") for row in rows), rows
    assert apply_row in [action["title"] for action in plan["api"]], plan["api"]
    # The Refactor Preview: the plan's title (the annotation), the file, Apply pressed.
    preview = plan["preview"]
    assert "error" not in preview, preview
    # inventory.py and its one edit; needing confirmation, they come
    # unchecked (Apply would apply nothing) until the user ticks the file.
    rows = preview["rows"]
    assert [(row["level"], row["text"]) for row in rows[:1]] == [(1, "inventory.py")], preview
    assert [row["level"] for row in rows] == [1, 2] and "except Exception:" in rows[1]["text"]
    assert [row["checked"] for row in rows] == [False, False], preview
    assert [row["checked"] for row in preview["ticked"]] == [True, True], preview
    assert preview["buttons"][:2] == ["Apply", "Discard"] and preview["clicked"] == "Apply", preview
    expected = before.replace(BARE_EXCEPT, CAUGHT, 1)
    assert plan["applied"]["text"] == expected, plan["applied"]
    # VS Code saves what a refactoring changed (files.refactoring.autoSave, on
    # by default): the plan goes from applied in the editor to applied, for
    # every client of the backend.
    inventory = project.root / "inventory.py"
    assert plan["saves"] == [str(inventory)] and plan["on_disk"] == expected, plan
    assert plan["settled"] and not plan["dirty"], plan
    assert plan["states"][-1] == "applied" and set(plan["states"]) <= {"in_editor", "applied"}
    (recorded,) = [p for p in backend_plans(project) if p["title"] == PLAN_TITLE]
    assert recorded["state"] == "applied", recorded
    assert inventory.read_text(encoding="utf-8") == expected
    # The server's one message about it, as VS Code shows it.
    assert "error" not in plan["message"], plan["message"]
    assert plan["message"]["message"].startswith(f"Applied plan “{PLAN_TITLE}” in the editor"), plan


# --- nothing found: the notification installs it ----------------------------

STAND_IN_PYTHON = """#!/bin/sh
# A stand-in for the selected interpreter: `-m pip install acp-lsp` puts
# acp-lsp beside it, as pip would into a venv's bin/.
if [ "$*" = "-m pip install acp-lsp" ]; then
    ln -s {acp_lsp} "$(dirname "$0")/acp-lsp" && echo "Successfully installed acp-lsp"
else
    echo "unexpected: $*" >&2
    exit 2
fi
"""


def test_vscode_installs_the_server_from_the_not_found_notification(
    code_server: tuple[Path, Path], demo_project: DemoProject, tmp_path: Path
) -> None:
    """acp-lsp in no place the extension looks: one notification lists them,
    with "Install in the selected interpreter" and "Set acpLsp.path";
    clicking Install runs the interpreter's pip in a terminal, and the
    server starts once acp-lsp appears beside the interpreter."""
    interpreter = selected_interpreter(tmp_path, with_server=False)
    interpreter.write_text(STAND_IN_PYTHON.format(acp_lsp=BIN / "acp-lsp"), encoding="utf-8")
    interpreter.chmod(0o755)
    probe = {"ACP_PROBE_SCENARIO": "install", "ACP_PYTHON_STUB_INTERPRETER": str(interpreter)}
    result = run_host(code_server, demo_project, tmp_path, probe=probe)

    assert result["activated_by_itself"] and result["server"] is not None, result
    assert result["starts_before"] == 0, result
    notification = result["notification"]
    assert "error" not in notification, notification
    assert notification["buttons"] == ["Install in the selected interpreter", "Set acpLsp.path"]
    assert notification["clicked"] == "Install in the selected interpreter", notification
    message = notification["message"]
    assert f"looked in: {interpreter.parent / 'acp-lsp'}, " in message, message
    assert f"selected interpreter ({interpreter})" in message, message
    assert result["terminals"] == ["Install acp-lsp"], result
    assert (interpreter.parent / "acp-lsp").is_symlink()
    assert result["running"] and result["starts"] == 1, result
    assert result["server"] == {
        "command": str(interpreter.parent / "acp-lsp"),
        "source": "the Python extension's selected interpreter",
    }, result
    assert result["saved"] and "nmae" in at(result["diagnostics"], demo_project.typo(), ERROR)
