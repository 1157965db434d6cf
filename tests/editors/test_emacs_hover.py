"""Real batch Emacs with eglot: hover through eldoc shows the demo's ruff
finding, its rule and when it was found; nothing on a plain line."""

from __future__ import annotations

import json
from pathlib import Path

from editor_harness import DemoProject, require_editor, run_editor
from test_emacs import CONFIG, HERE, emacs_with


def test_eglot_hover_through_eldoc(demo_project: DemoProject, tmp_path: Path) -> None:
    emacs = require_editor(emacs_with("eglot"), "Emacs with eglot")
    typo = demo_project.typo()
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(HERE / "eglot_hover_driver.el")],
        demo_project,
        {
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_DEMO_FILE": str(demo_project.greetings),
            "ACP_TYPO_LINE": str(typo.line),
            "ACP_TYPO_COLUMN": str(typo.codepoint_column),  # Emacs counts characters
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    assert result["eldoc-hooked"] is True  # eglot put its hover into eldoc
    shown = result["typo"]
    assert "Error" in shown and "ruff" in shown and "(required)" in shown, shown
    assert "Undefined name" in shown and "nmae" in shown, shown
    assert "F821" in shown and "https://docs.astral.sh/ruff/rules/undefined-name" in shown, shown
    assert "Found 20" in shown and "UTC by run" in shown, shown
    assert "def greet(name: str) -> str" in shown, shown
    assert result["plain"] == ":none"  # nothing to say: eldoc shows nothing
