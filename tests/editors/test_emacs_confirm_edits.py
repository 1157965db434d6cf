"""Real batch Emacs with eglot 1.9: what editors/emacs/README.md says under
"Server wants to edit … Proceed?". Eglot 1.9 has no codeAction/resolve, so
"Fix with ruff" reaches it as a command and acp-lsp sends the edit with
workspace/applyEdit: eglot asks first unless eglot-confirm-server-initiated-edits
is nil. This pins eglot's behaviour and the README's account of it; the
server's part (sending the edit, the answer to the command) is the same either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from editor_harness import DemoProject, require_editor, run_editor
from test_emacs import CONFIG, HERE, emacs_with

README = CONFIG.parent / "README.md"
VARIABLE = "eglot-confirm-server-initiated-edits"
FIX = "Fix with ruff: Remove unused import: `os`"
IMPORT = "import os\n"


def run_driver(demo_project: DemoProject, tmp_path: Path, confirm: str) -> dict[str, Any]:
    emacs = require_editor(emacs_with("eglot"), "Emacs with eglot")
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(HERE / "eglot_confirm_driver.el")],
        demo_project,
        {
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_DEMO_FILE": str(demo_project.root / "inventory.py"),
            "ACP_RESULT_FILE": str(result_file),
            "ACP_CONFIRM": confirm,
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    return result


def asked_about(prompt: dict[str, str]) -> list[Path]:
    """The files eglot 1.9's y-or-n-p names: "[eglot] Server wants to edit:",
    one indented path a line, " Proceed? "."""
    assert prompt["function"] == "y-or-n-p", prompt
    lines = prompt["text"].split("\n")
    assert lines[0] == "[eglot] Server wants to edit:", prompt
    assert lines[-1] == " Proceed? ", prompt
    return [Path(line.strip()).resolve() for line in lines[1:-1]]


def readme_says(text: str) -> bool:
    return text in " ".join(README.read_text(encoding="utf-8").split())


def test_eglot_asks_before_a_fix_by_default(demo_project: DemoProject, tmp_path: Path) -> None:
    """Answered no, the buffer stays as it was (and the server hears the
    edit was not applied); answered yes, the import is gone."""
    result = run_driver(demo_project, tmp_path, "default")
    inventory = (demo_project.root / "inventory.py").resolve()
    # The README describes eglot 1.9 and names its variable and default.
    assert result["eglot_version"] == "1.9", result["eglot_version"]
    assert result["bound"] is True and result["later_name_bound"] is False, result
    assert result["standard_value"] == result["value"] == "confirm", result
    assert readme_says(f"(`{VARIABLE}` is `{result['standard_value']}`)")
    assert readme_says("Later eglot versions rename it `eglot-confirm-server-edits`")

    original = result["original"]
    assert IMPORT in original
    refused = result["refused"]
    assert refused["picked"] == FIX, refused
    (prompt,) = refused["prompts"]
    assert asked_about(prompt) == [inventory], prompt
    assert refused["applied"] is False, refused  # the command's answer: not applied
    assert refused["text"] == original and refused["import_line"] is True, refused
    assert refused["modified"] is False, refused

    accepted = result["accepted"]
    assert accepted["picked"] == FIX, accepted
    (prompt,) = accepted["prompts"]
    assert asked_about(prompt) == [inventory], prompt
    assert accepted["applied"] is True, accepted
    assert accepted["import_line"] is False, accepted
    assert accepted["text"] == original.replace(IMPORT, "", 1), accepted
    assert accepted["modified"] is True, accepted  # in the buffer, not saved
    assert IMPORT in inventory.read_text(encoding="utf-8")


def test_eglot_applies_a_fix_at_once_when_told_not_to_ask(
    demo_project: DemoProject, tmp_path: Path
) -> None:
    """`(setq eglot-confirm-server-initiated-edits nil)`, as the README says:
    no prompt, the import is gone. Eglot 1.9 still asks for an edit to a file
    no buffer visits (as a plan's edit can be): nil skips the prompt only for
    files open in Emacs."""
    assert readme_says(f"`(setq {VARIABLE} nil)`: applied at once to files open in Emacs.")
    assert readme_says("Eglot 1.9 still asks when the edit touches a file no buffer visits")
    result = run_driver(demo_project, tmp_path, "nil")
    assert result["eglot_version"] == "1.9", result["eglot_version"]
    assert result["value"] == "nil", result

    fix = result["fix"]
    assert fix["picked"] == FIX, fix
    assert fix["prompts"] == [], fix
    assert fix["applied"] is True, fix
    assert fix["import_line"] is False, fix
    assert fix["text"] == result["original"].replace(IMPORT, "", 1), fix

    unvisited = result["unvisited"]
    greetings = demo_project.greetings.resolve()
    assert unvisited["visited"] is False, unvisited
    (prompt,) = unvisited["prompts"]
    assert asked_about(prompt) == [greetings], unvisited
    assert unvisited["refused"] is True, unvisited  # answered no: eglot refuses the edit
