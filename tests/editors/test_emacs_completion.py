"""Real batch Emacs with eglot: ``completion-at-point`` through eglot's capf
lists the presets after ``preset = "`` in acp.toml, and the finding's code
first after ``# noqa: `` on its line; completing writes the candidate."""

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
from test_emacs import CONFIG, HERE, emacs_with

from acp_backend.validation.presets import PRESETS

DRIVER = HERE / "eglot_completion_driver.el"
CODE = SUPPRESSED_CODE  # inventory.py's `import os`


def run_driver(
    project: DemoProject, tmp_path: Path, scenario: str, file: Path, typed: str
) -> dict[str, Any]:
    emacs = require_editor(emacs_with("eglot"), "Emacs with eglot")
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(DRIVER)],
        project,
        {
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_SCENARIO": scenario,
            "ACP_DEMO_FILE": str(file),
            "ACP_CODE": CODE,
            "ACP_TYPED": typed,
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    return result


def test_eglot_completes_presets_in_acp_toml(demo_project: DemoProject, tmp_path: Path) -> None:
    config = demo_project.root / "acp.toml"
    config.write_text(config.read_text(encoding="utf-8") + WITHOUT_MYPY, encoding="utf-8")
    result = run_driver(demo_project, tmp_path, "toml", config, typed="ru")
    # Every preset, nothing else, as *Completions* shows them: items without a
    # sortText keep the server's order, the backend's.
    assert result["candidates"] == list(PRESETS), result
    annotations = result["annotations"]
    assert annotations["ruff"] == PRESETS["ruff"].summary, annotations
    assert annotations["mypy"] == f"{PRESETS['mypy'].summary} (mypy not on PATH)", annotations
    # `ru` typed, then completion-at-point: the one match, written and closed.
    assert result["completed"] is True, result
    assert result["line"] == 'preset = "ruff"', result


def test_eglot_completes_a_findings_code_in_its_comment(
    demo_project: DemoProject, tmp_path: Path
) -> None:
    inventory = demo_project.root / "inventory.py"
    reported = ruff_codes(demo_project.root, "inventory.py")
    (line,) = reported[CODE]
    result = run_driver(demo_project, tmp_path, "noqa", inventory, typed=CODE[:2])
    assert result["line-number"] == line and result["line-before"] == "import os", result
    # The finding's code first, then every other code ruff reported.
    candidates = result["candidates"]
    assert candidates[:1] == [CODE], result
    assert sorted(candidates[1:]) == sorted(set(reported) - {CODE}), result
    assert result["annotations"][CODE].startswith("ruff: "), result
    # `F4` typed, then completion-at-point: the one match, written.
    assert result["completed"] is True, result
    assert result["line"] == f"import os  # noqa: {CODE}", result
