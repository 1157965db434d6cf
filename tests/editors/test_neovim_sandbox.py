"""Real headless Neovim: "Preview plan" opens the plan's sandbox copy (under
the data dir, with its own acp.toml), and the copy joins the running acp_lsp
client instead of starting a second one that would double every diagnostic
(issue 26, item 1). With no client running, a copy starts none."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from editor_harness import DemoProject, require_editor, run_editor
from editor_plans import propose_fix
from test_neovim import CONFIG_DIR, DEBIAN_NVIM, DRIVER, PIP_INSTALL, pypi_nvim

SANDBOX_DRIVER = Path(__file__).with_name("nvim_sandbox_driver.lua")

NEOVIMS = [
    pytest.param(pypi_nvim(), "lsp", id="nvim0.11-lsp/acp_lsp.lua"),
    pytest.param(pypi_nvim(), "legacy", id="nvim0.11-acp_lsp_legacy.lua"),
    pytest.param(DEBIAN_NVIM, "legacy", id="nvim-debian-acp_lsp_legacy.lua"),
]


def nvim_command(nvim: Path, driver: Path) -> list[str]:
    return [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {driver}"]


def nvim_for(binary: Path | None) -> Path:
    install = "run .ci/install-editors" if binary == DEBIAN_NVIM else PIP_INSTALL
    return require_editor(binary, "Neovim", install)


def commit(project: DemoProject) -> None:
    """Commit the demo, so that the sandbox is a git worktree (its acp.toml
    one folder deeper: <data dir>/sandboxes/<plan id>/demo/)."""
    top = project.root.parent
    git = ["git", "-C", str(top), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", project.root.name], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "demo"], check=True)


def once_each(diagnostics: list[dict[str, object]]) -> list[tuple[object, ...]]:
    """The diagnostics shown more than once."""
    keys = Counter((d["lnum"], d["col"], d["severity"], d["message"]) for d in diagnostics)
    return [key for key, count in keys.items() if count > 1]


@pytest.mark.parametrize("worktree", [False, True], ids=["copy", "git-worktree"])
@pytest.mark.parametrize(("binary", "config"), NEOVIMS)
def test_preview_plan_joins_the_running_client(
    binary: Path | None, config: str, worktree: bool, demo_project: DemoProject, tmp_path: Path
) -> None:
    nvim = nvim_for(binary)
    if worktree:
        commit(demo_project)
    sandbox = propose_fix(demo_project)  # ruff's fix changes inventory.py
    assert sandbox.is_relative_to(demo_project.data_dir / "sandboxes")
    assert (sandbox / "acp.toml").is_file()  # the marker that started a second client
    assert (sandbox.name == "demo") == worktree
    inventory = demo_project.root / "inventory.py"
    copy = sandbox / "inventory.py"
    result_file = tmp_path / "nvim-result.json"
    completed = run_editor(
        nvim_command(nvim, SANDBOX_DRIVER),
        demo_project,
        {
            "ACP_NVIM_CONFIG": config,
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_DEMO_FILE": str(inventory),
            "ACP_SANDBOX_FILE": str(copy),
            "ACP_RESULT_FILE": str(result_file),
        },
    )
    assert result_file.exists(), f"Neovim wrote no result: {completed.stderr}"
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    assert Path(result["copy_name"]) == copy, result  # what "Preview plan" opened
    # One client, rooted at the demo, serving both buffers.
    (client,) = result["clients"]
    assert client["name"] == "acp_lsp", result
    assert Path(client["root_dir"]) == demo_project.root, result
    assert result["real_attached"] == [client["id"]], result
    assert result["copy_attached"] == [client["id"]], result
    # The real file's findings, each once and unchanged by opening the copy;
    # the copy shows the plan's own findings, each once.
    assert result["before"], result
    assert once_each(result["after"]) == [], result
    assert sorted(map(json.dumps, result["after"])) == sorted(map(json.dumps, result["before"]))
    assert result["copy_shown"] is True and result["copy"], result
    assert once_each(result["copy"]) == [], result


@pytest.mark.parametrize(("binary", "config"), NEOVIMS)
def test_a_sandbox_copy_alone_starts_no_client(
    binary: Path | None, config: str, demo_project: DemoProject, tmp_path: Path
) -> None:
    """Opened with no acp_lsp client running, the copy starts none (a client
    rooted in the sandbox would be a second session of the project) and
    says once how to see it."""
    nvim = nvim_for(binary)
    copy = propose_fix(demo_project) / "inventory.py"
    result_file = tmp_path / "nvim-result.json"
    run_editor(
        nvim_command(nvim, DRIVER),
        demo_project,
        {
            "ACP_NVIM_CONFIG": config,
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_DEMO_FILE": str(copy),
            "ACP_RESULT_FILE": str(result_file),
            "ACP_NVIM_STOP_AFTER_OPEN": "1",
        },
    )
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, result
    assert result["clients_at_open"] == 0, result
    (told,) = result["notified"]
    assert "sandbox copy" in told and "open a file of the project first" in told, result
    assert result["diagnostic_count"] == 0, result
