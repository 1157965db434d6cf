"""Real batch Emacs, configured with editors/emacs/acp-lsp.el, shows the demo's
validation findings where they are: through eglot and through lsp-mode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from editor_harness import ROOT, DemoProject, require_editor, run_editor, which

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
    # Whether the client announces work-done progress, so the run shows as progress.
    progress: bool


EGLOT = Client("eglot", "eglot_driver.el", "eglot-error", "eglot-warning", False)
# lsp-mode 8.0 counts columns in characters while announcing UTF-16: the
# server recognises it and sends it characters (ADR 0013).
LSP_MODE = Client("lsp-mode", "lsp_mode_driver.el", ":error", ":warning", True)


# Longer than eglot's synchronous wait for `initialize` (eglot-sync-connect, 3 s).
SLOW_START_S = 3.5


def slow_server_on_path(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    """PATH with an `acp-lsp` first that waits SLOW_START_S before it starts
    the real one, so `initialize` is answered only after that long."""
    wrapper_dir = tmp_path / "slow-bin"
    wrapper_dir.mkdir()
    real = shutil.which("acp-lsp", path=env["PATH"])
    assert real is not None
    wrapper = wrapper_dir / "acp-lsp"
    wrapper.write_text(f'#!/bin/sh\nsleep {SLOW_START_S}\nexec "{real}" "$@"\n', "utf-8")
    wrapper.chmod(0o755)
    return {"PATH": f"{wrapper_dir}{os.pathsep}{env['PATH']}"}


@pytest.mark.parametrize(
    ("client", "slow_start"),
    [(EGLOT, False), (LSP_MODE, False), (EGLOT, True)],
    ids=["eglot", "lsp-mode", "eglot-slow-initialize"],
)
def test_emacs_shows_demo_diagnostics(
    client: Client, slow_start: bool, demo_project: DemoProject, tmp_path: Path
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
            **(slow_server_on_path(tmp_path, demo_project.env) if slow_start else {}),
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    (server,) = result["servers"]  # acp-lsp alone, started from the shipped config
    # The acp.toml folder, not the git checkout around it.
    assert Path(server["root"]) == demo_project.root, result

    shown = {(d["line"], d["column"], d["type"]): d["text"] for d in result["diagnostics"]}
    typo, todo = demo_project.typo(), demo_project.todo()
    # Buffer columns count characters: both clients put a finding after the
    # line's emoji at the same column, the finding's own.
    assert typo.utf16_column > typo.codepoint_column  # the line has emoji before it
    typo_at = (typo.line, typo.codepoint_column, client.error_type)
    assert "nmae" in shown.get(typo_at, ""), result
    todo_at = (todo.line, todo.codepoint_column, client.warning_type)
    assert "pick the farewell" in shown.get(todo_at, ""), result
    if client.progress:
        assert result["progress"][:1] == ["begin"] and result["progress"][-1:] == ["end"], result
    else:
        assert result["progress"] == [], result  # never sent to a client that cannot show it


@pytest.mark.parametrize("client", [EGLOT, LSP_MODE], ids=lambda client: client.library)
def test_emacs_shows_a_broken_acp_toml_on_its_line(
    client: Client, demo_project: DemoProject, tmp_path: Path
) -> None:
    """acp.toml buffers are served too (conf-toml-mode): a config error shows
    there, on the offending line."""
    emacs = require_editor(emacs_with(client.library), f"Emacs with {client.library}")
    config = demo_project.root / "acp.toml"
    lines = config.read_text(encoding="utf-8").splitlines(keepends=True)
    broken = next(n for n, line in enumerate(lines) if line.startswith("mode = "))
    lines[broken] = 'mode = "mandatory"\n'
    config.write_text("".join(lines), encoding="utf-8")
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(HERE / client.driver)],
        demo_project,
        {
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_DEMO_FILE": str(config),
            "ACP_RESULT_FILE": str(result_file),
            "ACP_ERROR_ONLY": "1",
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    shown = [(d["line"], d["type"], d["text"]) for d in result["diagnostics"]]
    assert any(
        line == broken and kind == client.error_type and "mode" in text
        for line, kind, text in shown
    ), result


def test_lsp_mode_offers_the_server_only_below_an_acp_toml(
    demo_project: DemoProject, tmp_path: Path
) -> None:
    """Elsewhere nothing is validated, and lsp-mode's flymake would wait for
    diagnostics that never come (`Flymake:Wait`), even in a git repository."""
    emacs = require_editor(emacs_with("lsp-mode"), "Emacs with lsp-mode")
    stray = tmp_path / "elsewhere" / "notes.py"
    stray.parent.mkdir()
    stray.write_text("print('not validated')\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(stray.parent)], check=True)
    probe = """(progn (package-activate-all) (require 'lsp-mode)
      (load (getenv "ACP_EMACS_CONFIG") nil t)
      (princ (mapconcat (lambda (file)
                          (with-current-buffer (find-file-noselect file)
                            (format "%s=%s\\n" (file-name-nondirectory file)
                                    (mapcar #'lsp--client-server-id (lsp--find-clients)))))
                        (split-string (getenv "ACP_FILES") ":") "")))"""
    completed = run_editor(
        [str(emacs), "--batch", "--eval", probe],
        demo_project,
        {
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_FILES": f"{demo_project.greetings}:{stray}",
        },
    )
    assert completed.returncode == 0, completed.stderr
    offered = dict(line.split("=", 1) for line in completed.stdout.splitlines())
    assert "acp-lsp" in offered["greetings.py"], completed.stdout
    assert "acp-lsp" not in offered["notes.py"], completed.stdout


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
