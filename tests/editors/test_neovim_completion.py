"""Real headless Neovim 0.11 completes with its own machinery
(``vim.lsp.completion``, autotrigger on the server's trigger characters):
the presets after ``preset = "`` in acp.toml, and the finding's code first
after ``# noqa: `` on its line; then "Suppress F401 on this line (ruff)" is
picked from ``vim.lsp.buf.code_action``, undone, redone, and the next save's
ruff run no longer reports it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from editor_harness import (
    SUPPRESSED_CODE,
    WITHOUT_MYPY,
    DemoProject,
    require_editor,
    ruff_codes,
    run_editor,
)
from test_neovim import CONFIG_DIR, PIP_INSTALL, pypi_nvim

from acp_backend.validation.presets import PRESETS

DRIVER = Path(__file__).with_name("nvim_completion_driver.lua")
CODE = SUPPRESSED_CODE  # inventory.py's `import os`


def run_driver(project: DemoProject, tmp_path: Path, scenario: str, file: Path) -> dict[str, Any]:
    nvim = require_editor(pypi_nvim(), "Neovim >= 0.11", PIP_INSTALL)
    result_file = tmp_path / "nvim-result.json"
    completed = run_editor(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {DRIVER}"],
        project,
        {
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_SCENARIO": scenario,
            "ACP_DEMO_FILE": str(file),
            "ACP_CODE": CODE,
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Neovim wrote no result: {completed.stderr}"
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    return result


def test_neovim_completes_presets_in_acp_toml(demo_project: DemoProject, tmp_path: Path) -> None:
    config = demo_project.root / "acp.toml"
    config.write_text(config.read_text(encoding="utf-8") + WITHOUT_MYPY, encoding="utf-8")
    result = run_driver(demo_project, tmp_path, "toml", config)
    assert result["table_line"] == "[[validations]]", result
    # Every preset, nothing else, in the order Neovim shows them (by label).
    labels = [item["abbr"] for item in result["items"]]
    assert labels == sorted(PRESETS), labels
    assert result["pum_visible"] is True
    ruff = next(item for item in result["items"] if item["abbr"] == "ruff")
    assert ruff["client_id"] == result["client_id"]  # from acp-lsp, through vim.lsp.completion
    assert ruff["kind"] == "EnumMember"
    assert ruff["menu"] == PRESETS["ruff"].summary  # ruff is on PATH: nothing more
    assert "`ruff` found at" in ruff["info"], ruff
    assert 'format = "json"' in ruff["info"], ruff  # what the preset fills in
    mypy = next(item for item in result["items"] if item["abbr"] == "mypy")
    assert mypy["menu"] == f"{PRESETS['mypy'].summary} (mypy not on PATH)", mypy
    # Taken with <C-n>…<C-y>: the value is written, its quote closed.
    assert result["line"] == 'preset = "ruff"', result


def test_neovim_completes_and_suppresses_a_findings_code(
    demo_project: DemoProject, tmp_path: Path
) -> None:
    inventory = demo_project.root / "inventory.py"
    reported = ruff_codes(demo_project.root, "inventory.py")
    (line,) = reported[CODE]
    result = run_driver(demo_project, tmp_path, "noqa", inventory)
    assert result["lnum"] == line and result["line_before"] == "import os", result
    assert {(d["code"], d["lnum"]) for d in result["codes_before"]} == {
        (code, lnum) for code, lines in reported.items() for lnum in lines
    }, result

    # The menu: the finding's code first, then every other code ruff reported.
    words = [item["abbr"] for item in result["items"]]
    assert words[:1] == [CODE], words
    assert sorted(words[1:]) == sorted(set(reported) - {CODE}), words
    first = result["items"][0]
    assert first["client_id"] == result["client_id"]
    assert first["kind"] == "Constant"
    assert first["menu"].startswith("ruff: "), first
    assert "https://docs.astral.sh/ruff/rules/unused-import" in first["info"], first
    # Taken with <C-n><C-y>, then undone.
    assert result["line_completed"] == f"import os  # noqa: {CODE}", result
    assert result["line_after_completion_undo"] == "import os", result

    # The code action, applied from vim.lsp.buf.code_action, is one undoable edit.
    title = f"Suppress {CODE} on this line (ruff)"
    assert result["titles"].count(title) == 1, result["titles"]
    assert result["line_suppressed"] == f"import os  # noqa: {CODE}", result
    assert result["modified"] is True
    assert result["line_after_undo"] == "import os", result
    assert result["line_after_redo"] == result["line_suppressed"], result

    # Saved: the next ruff run drops that finding, and only that one.
    assert result["cleared"] is True, result
    assert {(d["code"], d["lnum"]) for d in result["codes_after"]} == {
        (code, lnum) for code, lines in reported.items() for lnum in lines if code != CODE
    }, result
    assert f"import os  # noqa: {CODE}\n" in inventory.read_text(encoding="utf-8")
