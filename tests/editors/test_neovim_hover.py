"""Real headless Neovim 0.11: ``vim.lsp.buf.hover`` shows the ruff finding with
its rule link and when it was found, a function's signature, nothing on a
plain line, and the plan that changed a line with its decision;
``vim.lsp.buf.workspace_symbol('ruff')`` leads to ruff's acp.toml line.
Hover names the fix the code-action menu offers, no other (issue 26, item
5), and never shows an older run's finding on a line that changed."""

from __future__ import annotations

import json
from pathlib import Path

from editor_harness import ROOT, DemoProject, require_editor, run_editor
from editor_plans import apply_inventory_plan
from test_neovim import PIP_INSTALL, pypi_nvim

DRIVER = Path(__file__).with_name("nvim_hover_driver.lua")
CONFIG_DIR = ROOT / "editors" / "neovim"
IMPORT_LINE = 2  # inventory.py's `import os`: ruff's F401, which ruff can fix


def declaration_line(root: Path, name: str) -> int:
    lines = (root / "acp.toml").read_text().splitlines()
    named = lines.index(f'name = "{name}"')
    return max(i for i in range(named) if lines[i] == "[[validations]]")


def test_neovim_hover_and_workspace_symbols(demo_project: DemoProject, tmp_path: Path) -> None:
    nvim = require_editor(pypi_nvim(), "Neovim >= 0.11", PIP_INSTALL)
    plan_line = apply_inventory_plan(demo_project.root, demo_project.data_dir)
    typo = demo_project.typo()
    lines = demo_project.greetings.read_text(encoding="utf-8").splitlines()
    farewell_body = next(i for i, line in enumerate(lines) if 'return f"{note}' in line)
    result_file = tmp_path / "nvim-result.json"
    completed = run_editor(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {DRIVER}"],
        demo_project,
        {
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_DEMO_FILE": str(demo_project.greetings),
            "ACP_TYPO_LINE": str(typo.line),
            "ACP_TYPO_COL": str(typo.utf8_column),
            "ACP_FUNCTION_LINE": str(farewell_body),
            "ACP_PLAN_FILE": str(demo_project.root / "inventory.py"),
            "ACP_PLAN_LINE": str(plan_line),
            "ACP_IMPORT_LINE": str(IMPORT_LINE),
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Neovim wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    hovers = result["hovers"]

    on_typo = hovers["typo"]
    assert on_typo["syntax"] == "markdown"
    assert "**Error** from **ruff** (required)" in on_typo["text"]
    assert "Undefined name `nmae`" in on_typo["text"]
    assert "(<https://docs.astral.sh/ruff/rules/undefined-name>)" in on_typo["text"]
    assert "Found 20" in on_typo["text"] and "UTC by run" in on_typo["text"]
    assert "def greet(name: str) -> str" in on_typo["text"]

    assert "def farewell(name: str) -> str" in hovers["function"]["text"]
    assert "ruff" not in hovers["function"]["text"]
    assert hovers["plain"] is None  # the module docstring: nothing to say, no float

    on_plan = hovers["plan"]["text"]
    assert "**Applied plan** “Catch Exception, not everything” by fixer-agent" in on_plan
    assert "Which exceptions should load() swallow? → **Exception** (confidence 70%)" in on_plan

    (ruff,) = [s for s in result["symbols"] if s["text"].endswith("ruff")]
    assert Path(ruff["filename"]) == demo_project.root / "acp.toml"
    assert ruff["lnum"] == declaration_line(demo_project.root, "ruff") + 1  # 1-based
    assert ruff["text"] == "[Event] ruff"

    # One rule for "has a fix": F821 has no fix of ruff's own, so the menu and
    # the hover offer a plan only; F401's own fix is a quick fix in both.
    assert "**Propose fix with ruff** (as a plan)" in on_typo["text"]
    assert "quick fix" not in on_typo["text"] and "fix available" not in on_typo["text"]
    assert "Propose fix with ruff (as a plan)" in result["typo_actions"]
    assert not [t for t in result["typo_actions"] if t.startswith("Fix with ruff")]
    on_import = hovers["import"]["text"]
    assert "`os` imported but unused" in on_import
    assert "quick fix: **Fix with ruff**" in on_import
    assert [t for t in result["import_actions"] if t.startswith("Fix with ruff")]

    # A line added above: the finding moved with its line and says so; its
    # old place shows it no more; once its own line changes, neither.
    moved = hovers["moved_typo"]["text"]
    assert "Undefined name `nmae`" in moved
    assert "the file has changed since, not this line" in moved
    for name in ("old_place", "edited_typo"):
        shown = hovers[name]
        assert shown is None or "Undefined name" not in shown["text"], (name, shown)
    # From the save until the new run answers, and after: never one line off.
    assert result["after_save"], result
    for shown in result["after_save"]:
        assert shown is None or "Undefined name" not in shown["text"], shown
    fresh = hovers["new_run"]["text"]
    assert "Undefined name `nmae`" in fresh and "changed since" not in fresh
