"""Real batch Emacs with editors/emacs/acp-lsp.el: a plan's sandbox copy
(under the data dir, with its own acp.toml) joins the running acp-lsp, through
eglot and through lsp-mode, instead of starting a second server that would
double every diagnostic (issue 26, item 1). With no server running, a copy
starts none."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from editor_harness import DemoProject, require_editor, run_editor
from editor_plans import propose_fix
from test_emacs import CONFIG, HERE, emacs_with

DRIVER = HERE / "emacs_sandbox_driver.el"
CLIENTS = ["eglot", "lsp-mode"]


def run_driver(
    client: str,
    project: DemoProject,
    tmp_path: Path,
    copy: Path,
    *,
    real: Path | None = None,
    later: Path | None = None,
) -> dict[str, object]:
    emacs = require_editor(emacs_with(client), f"Emacs with {client}")
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(DRIVER)],
        project,
        {
            "ACP_EMACS_CLIENT": client,
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_SANDBOX_FILE": str(copy),
            "ACP_RESULT_FILE": str(result_file),
            **({"ACP_DEMO_FILE": str(real)} if real else {}),
            **({"ACP_LATER_FILE": str(later)} if later else {}),
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    return result


def repeated(diagnostics: list[dict[str, object]]) -> list[tuple[object, ...]]:
    """The diagnostics shown more than once."""
    keys = Counter((d["line"], d["column"], d["type"], d["text"]) for d in diagnostics)
    return [key for key, count in keys.items() if count > 1]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_sandbox_copy_joins_the_running_server(
    client: str, demo_project: DemoProject, tmp_path: Path
) -> None:
    copy = propose_fix(demo_project) / "inventory.py"
    real = demo_project.root / "inventory.py"
    result = run_driver(client, demo_project, tmp_path, copy, real=real)
    assert result["copy_connect_error"] is None, result
    (server,) = result["servers"]  # one acp-lsp, one process
    assert server[0] == "acp-lsp" and Path(server[1]) == demo_project.root, result
    assert result["processes"] == 1, result
    assert result["copy_joined"] == [server], result
    assert server in result["real_joined"], result
    # The real file's findings, each once and as before the copy was opened;
    # the copy shows the plan's own findings, each once.
    assert result["before"], result
    assert repeated(result["after"]) == [], result
    assert sorted(map(json.dumps, result["after"])) == sorted(map(json.dumps, result["before"]))
    assert result["copy"] and repeated(result["copy"]) == [], result
    # lsp-mode opens it as a library file of the workspace: read-only.
    assert result["copy_read_only"] is (True if client == "lsp-mode" else None), result


@pytest.mark.parametrize("client", CLIENTS)
def test_a_sandbox_copy_alone_starts_no_server(
    client: str, demo_project: DemoProject, tmp_path: Path
) -> None:
    copy = propose_fix(demo_project) / "inventory.py"
    real = demo_project.root / "inventory.py"
    result = run_driver(client, demo_project, tmp_path, copy, later=real)
    assert result["servers"] == [] and result["processes"] == 0, result
    assert result["copy_joined"] == [] and result["copy"] == [], result
    if client == "eglot":  # eglot-ensure's error, shown in the echo area
        assert "sandbox copy" in str(result["copy_connect_error"]), result
        # Once the project's server runs, eglot gives it the open copy.
        ((name, root),) = result["copy_joined_later"]
        assert name == "acp-lsp" and Path(root) == demo_project.root, result
