"""Real batch Emacs with eglot, configured with editors/emacs/acp-lsp.el, shows
the demo's validation findings where they are."""

from __future__ import annotations

import json
from pathlib import Path

from editor_harness import ROOT, DemoProject, require_editor, run_editor, which

DRIVER = Path(__file__).with_name("eglot_driver.el")
CONFIG = ROOT / "editors" / "emacs" / "acp-lsp.el"


def test_eglot_shows_demo_diagnostics(demo_project: DemoProject, tmp_path: Path) -> None:
    emacs = require_editor(which("emacs"), "Emacs with eglot (emacs-nox, elpa-eglot)")
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(DRIVER)],
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

    # Flymake positions are buffer positions: columns count characters (code
    # points), so a right answer here proves the UTF-16 conversion both ways.
    shown = {(d["line"], d["column"], d["type"]): d["text"] for d in result["diagnostics"]}
    typo, todo = demo_project.typo(), demo_project.todo()
    assert "nmae" in shown.get((typo.line, typo.codepoint_column, "eglot-error"), ""), result
    todo_text = shown.get((todo.line, todo.codepoint_column, "eglot-warning"), "")
    assert "pick the farewell" in todo_text, result
