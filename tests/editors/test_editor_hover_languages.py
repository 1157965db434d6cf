"""Real editors, files that are not Python (issue 24): in headless Neovim 0.11
(``vim.lsp.buf.hover``) and in batch Emacs 28 + eglot 1.9 (hover through
eldoc), hovering on a real finding in a JavaScript file (eslint) and in a
shell script (shellcheck) shows the finding's message, the enclosing
function's signature and the first line of the comment above it, the
snippets (the function's first lines; the file's other findings of the same
rule) and the line's last commit, in a git repository committed with a fixed
author and date.

Neovim's shipped config starts acp-lsp for any filetype below an acp.toml;
editors/emacs/acp-lsp.el registers Python and TOML modes only, so the eglot
driver adds js-mode and sh-mode to ``acp-lsp-major-modes`` (before eglot
loads: afterwards eglot would not see them)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from editor_harness import (
    BIN,
    EDITOR_TIMEOUT_S,
    ROOT,
    DemoProject,
    require_editor,
    run_editor,
    which,
)
from test_emacs import CONFIG, emacs_with
from test_neovim import PIP_INSTALL, pypi_nvim

from tests.support.git import AUTHOR, committed

HERE = Path(__file__).parent
NVIM_DRIVER = HERE / "nvim_hover_languages_driver.lua"
EGLOT_DRIVER = HERE / "eglot_hover_languages_driver.el"
NVIM_CONFIG_DIR = ROOT / "editors" / "neovim"
SUBJECT = "Add the cart helpers and the deploy script"
WHEN = "2026-11-30 08:15 UTC"  # tests/support/git.py's fixed date

# The presets as a user writes them: each runs on a save of its own files.
ACP_TOML = """\
[[validations]]
preset = "eslint"

[[validations]]
preset = "shellcheck"
"""
ESLINT_CONFIG = 'export default [{ rules: { eqeqeq: "error" } }];\n'

# eqeqeq three times: one in total() (the one hovered), one in each other function.
CART_JS = """\
// Cart helpers.

/** Formats a price given in cents. */
function euros(cents) {
  if (cents == 0) {
    return "free";
  }
  return (cents / 100).toFixed(2);
}

/**
 * Adds up the prices of the items.
 * Items without a price are free.
 */
function total(items) {
  let sum = 0;
  let count = 0;
  for (const item of items) {
    count += 1;
    // A missing price is not zero.
    if (item.price == null) {
      continue;
    }
    sum += item.price;
  }
  return count > 0 ? sum : 0;
}

/** Whether the cart holds nothing. */
function isEmpty(items) {
  return items.length == 0;
}

module.exports = { euros, total, isEmpty };
"""

# SC2086 (an unquoted expansion) three times: in deploy() (the one hovered),
# in banner() and in prune().
DEPLOY_SH = """\
#!/usr/bin/env bash
# Deploys the site.
set -eu

# Prints a banner and logs it.
banner() {
  echo "== $1 =="
  logger -t deploy $1
}

# Copies the build to the target host.
# Needs rsync and ssh.
deploy() {
  local target="$1"
  local source="build/"
  banner "deploying"
  mkdir -p "$source"
  echo "to $target"
  rsync -a "$source" $target:/srv/site/
  echo "done"
}

# Removes old releases.
prune() {
  ssh $1 "rm -rf /srv/old"
}

deploy "$@"
prune "$@"
"""


@dataclass(frozen=True)
class Case:
    file: str
    text: str
    validation: str  # the preset, the validation's name and its tool
    needle: str  # only the finding's line holds it
    at: str  # where on that line the finding starts
    message: str
    code: str
    others: tuple[str, ...]  # the lines of the file's other findings of that rule
    function: str
    signature: str
    doc: str  # the first line of the comment above the function
    fence: str  # the Markdown code block's language

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @property
    def line(self) -> int:
        (line,) = [n for n, text in enumerate(self.lines) if self.needle in text]
        return line

    @property
    def column(self) -> int:
        """Code points, which are bytes and UTF-16 units as well: ASCII only."""
        text = self.lines[self.line]
        assert text.isascii()
        return text.index(self.at)

    def first_lines(self) -> tuple[str, str]:
        """The function's first-lines snippet, title and body: its name, kind,
        lines (1-based) and how many more it has, and its first six lines
        (nothing to dedent: the functions are at the top level)."""
        start = next(n for n, text in enumerate(self.lines) if text.startswith(self.signature))
        end = self.lines.index("}", start)
        shown = start + 5
        title = f"{self.function} (function), lines {start + 1}-{end + 1}, {end - shown} more"
        return title, "\n".join(self.lines[start : shown + 1])

    def other_places(self) -> list[str]:
        """The same-rule snippet's body: ``line: text`` for each other finding."""
        return [
            f"{n + 1}: {text.strip()}"
            for n, text in enumerate(self.lines)
            if any(other in text for other in self.others)
        ]


CASES = {
    "javascript": Case(
        file="cart.js",
        text=CART_JS,
        validation="eslint",
        needle="item.price == null",
        at="==",
        message="Expected '===' and instead saw '=='.",
        code="eqeqeq",
        others=("cents == 0", "items.length == 0"),
        function="total",
        signature="function total(items)",
        doc="Adds up the prices of the items.",
        fence="javascript",
    ),
    "shell": Case(
        file="deploy.sh",
        text=DEPLOY_SH,
        validation="shellcheck",
        needle='rsync -a "$source" $target',
        at="$target",
        message="Double quote to prevent globbing and word splitting.",
        code="SC2086",
        others=("logger -t deploy $1", "ssh $1"),
        function="deploy",
        signature="deploy()",
        doc="Copies the build to the target host.",
        fence="bash",
    ),
}


def make_project(tmp_path: Path) -> tuple[DemoProject, str]:
    """Both files and the validations' config committed in a fresh git
    repository, registered in a fresh backend data dir: the project and its commit."""
    root = tmp_path / "shop"
    root.mkdir()
    files = {
        "acp.toml": ACP_TOML,
        "eslint.config.mjs": ESLINT_CONFIG,
        "cart.js": CART_JS,
        "deploy.sh": DEPLOY_SH,
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    commit = committed(root, SUBJECT)
    data_dir = tmp_path / "data"
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "ACP_DATA_DIR": str(data_dir),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        # No user configuration of any editor leaks in; nothing is written to ~.
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    registered = subprocess.run(
        [str(BIN / "acp-backend"), "--data-dir", str(data_dir), "resource", "add", str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=EDITOR_TIMEOUT_S,
    )
    assert registered.returncode == 0, registered.stdout + registered.stderr
    return DemoProject(root, data_dir, env), commit


def in_neovim(case: Case, project: DemoProject, tmp_path: Path) -> dict:
    nvim = require_editor(pypi_nvim(), "Neovim >= 0.11", PIP_INSTALL)
    result_file = tmp_path / "nvim-result.json"
    completed = run_editor(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {NVIM_DRIVER}"],
        project,
        {
            "ACP_NVIM_CONFIG_DIR": str(NVIM_CONFIG_DIR),
            "ACP_FILE": str(project.root / case.file),
            "ACP_VALIDATION": case.validation,
            "ACP_LINE": str(case.line),
            "ACP_COL": str(case.column),  # bytes
            "ACP_MESSAGE": case.message,
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Neovim wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    return result


def in_eglot(case: Case, project: DemoProject, tmp_path: Path) -> dict:
    emacs = require_editor(emacs_with("eglot"), "Emacs with eglot")
    result_file = tmp_path / "emacs-result.json"
    completed = run_editor(
        [str(emacs), "--batch", "-l", str(EGLOT_DRIVER)],
        project,
        {
            "ACP_EMACS_CONFIG": str(CONFIG),
            "ACP_FILE": str(project.root / case.file),
            "ACP_VALIDATION": case.validation,
            "ACP_LINE": str(case.line),
            "ACP_COLUMN": str(case.column),  # characters
            "ACP_MESSAGE": case.message,
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Emacs wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result}\n{completed.stderr}"
    return result


# What each editor says it is, file by file: acp-lsp itself goes by the file
# name (acp_backend/inspect/languages.py), never by the languageId.
NEOVIM_FILETYPES = {"cart.js": "javascript", "deploy.sh": "sh"}
EGLOT_MODES = {"cart.js": ("js-mode", "js"), "deploy.sh": ("sh-mode", "sh")}


@pytest.mark.parametrize("language", list(CASES))
@pytest.mark.parametrize("editor", ["neovim", "eglot"])
def test_hover_in_a_real_editor_shows_finding_entity_snippets_and_commit(
    editor: str, language: str, tmp_path: Path
) -> None:
    case = CASES[language]
    require_editor(which(case.validation), case.validation)
    project, commit = make_project(tmp_path)

    if editor == "neovim":
        result = in_neovim(case, project, tmp_path)
        # The shipped config has no `filetypes`: any file below acp.toml, and
        # didOpen's languageId is the filetype.
        assert result["config_filetypes"] is None, result
        assert result["filetype"] == result["language_id"] == NEOVIM_FILETYPES[case.file]
        (diagnostic,) = result["diagnostics"]
        assert diagnostic["col"] == case.column, result
        assert diagnostic["message"] == case.message and diagnostic["code"] == case.code
        hover = result["hover"]
        assert hover is not None, result
        assert hover["syntax"] == "markdown"
        shown = hover["text"]
    else:
        result = in_eglot(case, project, tmp_path)
        # Registered for js-mode and sh-mode by the driver (acp-lsp.el serves
        # Python and TOML only); eglot 1.9 names the language after the mode.
        assert result["server"] == "acp-lsp", result
        assert (result["major-mode"], result["language-id"]) == EGLOT_MODES[case.file]
        assert [text for text in result["diagnostics"] if case.message in text], result
        assert result["eldoc-hooked"] is True, result
        shown = result["hover"]

    # Both show the Markdown as the server sent it (eglot's markdown-mode
    # only fontifies it): the finding, the commit, the entity, the snippets.
    sections = shown.split("\n\n---\n\n")
    assert len(sections) == 5, shown
    finding, history, entity, first_lines, same_rule = sections
    assert finding.startswith(
        f"**Error** from **{case.validation}** (required)  \n{case.message}  \n"
        f"Rule: `{case.code}`  \nFound "
    ), shown
    # The line's last commit, by the fixed author.
    assert history == f"**Last commit** `{commit[:8]}` “{SUBJECT}” by {AUTHOR}, {WHEN}", shown
    # The enclosing function's header, and the first line of the comment above it.
    assert entity == f"```{case.fence}\n{case.signature}\n```\n\n{case.doc}", shown
    # The snippets: the function's first lines (the hovered line is below
    # them), and the file's other findings of the rule with their lines.
    title, body = case.first_lines()
    assert first_lines == f"**{title}**\n\n```{case.fence}\n{body}\n```", shown
    places = "\n".join(case.other_places())
    assert same_rule == (
        f"**2 more {case.code} findings in this file ({case.validation})**\n\n"
        f"```{case.fence}\n{places}\n```"
    ), shown
