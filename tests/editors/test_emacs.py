"""Real batch Emacs, configured with editors/emacs/acp-lsp.el, shows the demo's
validation findings where they are: through eglot and through lsp-mode."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from editor_harness import ROOT, DemoProject, Finding, require_editor, run_editor, which

HERE = Path(__file__).parent
CONFIG = ROOT / "editors" / "emacs" / "acp-lsp.el"


def emacs_with(library: str) -> Path | None:
    """Emacs, if it can load ``library`` (eglot is built in only from Emacs 29)."""
    emacs = which("emacs")
    if emacs is None:
        return None
    probe = subprocess.run(
        [str(emacs), "--batch", "--eval", f'(kill-emacs (if (locate-library "{library}") 0 1))'],
        capture_output=True,
        check=False,
        timeout=30,
    )
    return emacs if probe.returncode == 0 else None


@dataclass(frozen=True)
class Client:
    library: str
    driver: str
    error_type: str  # the flymake diagnostic types this client reports
    warning_type: str
    # Where in the buffer line the client puts a finding. Buffer columns count
    # characters (code points): eglot converts the server's UTF-16 offsets
    # right; lsp-mode 8.0 takes them as characters, one column too far right
    # per emoji before the finding (documented in docs/editors.md).
    buffer_column: Callable[[Finding], int]
    # Whether the client announces work-done progress, so the run shows as progress.
    progress: bool


EGLOT = Client(
    "eglot", "eglot_driver.el", "eglot-error", "eglot-warning", lambda f: f.codepoint_column, False
)
LSP_MODE = Client(
    "lsp-mode",
    "lsp_mode_driver.el",
    ":error",
    ":warning",
    lambda f: f.utf16_column,
    True,
)


@pytest.mark.parametrize("client", [EGLOT, LSP_MODE], ids=lambda client: client.library)
def test_emacs_shows_demo_diagnostics(
    client: Client, demo_project: DemoProject, tmp_path: Path
) -> None:
    emacs = require_editor(emacs_with(client.library), f"Emacs with {client.library}")
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(HERE / client.driver)],
        demo_project,
        {
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_DEMO_FILE": str(demo_project.greetings),
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    assert len(result["servers"]) == 1, result  # acp-lsp alone, started from the shipped config

    shown = {(d["line"], d["column"], d["type"]): d["text"] for d in result["diagnostics"]}
    typo, todo = demo_project.typo(), demo_project.todo()
    typo_at = (typo.line, client.buffer_column(typo), client.error_type)
    assert "nmae" in shown.get(typo_at, ""), result
    todo_at = (todo.line, client.buffer_column(todo), client.warning_type)
    assert "pick the farewell" in shown.get(todo_at, ""), result
    if client.progress:
        assert result["progress"][:1] == ["begin"] and result["progress"][-1:] == ["end"], result
    else:
        assert result["progress"] == [], result  # never sent to a client that cannot show it


def test_eglot_lists_and_runs_the_demos_code_actions(
    demo_project: DemoProject, tmp_path: Path
) -> None:
    """eglot (no codeAction/resolve) lists the actions on ruff's unused
    import and runs "Fix with ruff" as a command the server applies."""
    emacs = require_editor(emacs_with("eglot"), "Emacs with eglot")
    inventory = demo_project.root / "inventory.py"
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(HERE / "eglot_code_action_driver.el")],
        demo_project,
        {
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_DEMO_FILE": str(inventory),
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    titles = result["titles"]
    assert "Fix with ruff: Remove unused import: `os`" in titles, titles
    assert "Propose fix with ruff (as a plan)" in titles, titles
    assert "Run validations on inventory.py" in titles, titles
    assert result["fixed"] is True and result["modified"] is True, result
    assert "import os\n" in inventory.read_text(encoding="utf-8")  # in the buffer, not saved
