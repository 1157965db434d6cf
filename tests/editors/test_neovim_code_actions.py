"""Real headless Neovim 0.11 picks "Fix with ruff" on the demo's unused
import: the line goes from the buffer (undoable), and the Error clears
after the next run. The demo's "Done when", driven as a user would."""

from __future__ import annotations

import json
from pathlib import Path

from editor_harness import DemoProject, require_editor, run_editor
from test_neovim import CONFIG_DIR, PIP_INSTALL, pypi_nvim

DRIVER = Path(__file__).with_name("nvim_code_action_driver.lua")


def test_neovim_applies_ruffs_quick_fix(demo_project: DemoProject, tmp_path: Path) -> None:
    nvim = require_editor(pypi_nvim(), "Neovim >= 0.11", PIP_INSTALL)
    inventory = demo_project.root / "inventory.py"
    on_disk = inventory.read_text(encoding="utf-8")
    result_file = tmp_path / "nvim-result.json"
    completed = run_editor(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {DRIVER}"],
        demo_project,
        {
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_DEMO_FILE": str(inventory),
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Neovim wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    assert result["severity"] == 1  # vim.diagnostic.severity.ERROR: ruff is required
    assert result["line_before"] == "import os"
    titles = result["titles"]
    assert "Fix with ruff: Remove unused import: `os`" in titles, titles
    assert "Propose fix with ruff (as a plan)" in titles, titles
    # The fix removed the line, in the buffer, as one undoable change.
    assert result["count_after"] == result["count_before"] - 1, result
    assert result["line_after"] != "import os" and result["modified"], result
    assert result["line_after_undo"] == "import os", result
    assert result["line_after_redo"] == result["line_after"], result
    # Saved and run again: ruff no longer reports it (its other findings stay).
    assert result["cleared"] is True, result
    assert result["ruff_left"] >= 1, result
    assert "import os\n" not in inventory.read_text(encoding="utf-8")
    assert "import os\n" in on_disk
