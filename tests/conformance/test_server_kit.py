"""The server suite run as a user runs it: acp-lsp passes in every client
profile; acp-lsp broken on purpose fails exactly the checks it should."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from kit_harness import SERVER, run_kit

from acp_conformance.profiles import profiles
from tests.support.servers import ServerProcess

BROKEN = (
    f"{sys.executable} -m tests.conformance.broken_server {{mode}} --acp {{acp}} "
    "--data-dir {data_dir}"
)


def test_acp_lsp_passes_in_every_profile(tmp_path: Path) -> None:
    run = run_kit(tmp_path, "--acp-conformance=server", "--server-command", SERVER)
    assert run.status == 0, run.output[-3000:]
    outcomes = run.outcomes()
    for profile in profiles():
        for check in (
            "severity_table",
            "clears_on_pass",
            "completion",
            "hover_markup",
            "plan_paths_jailed",
            "clean_shutdown",
            "no_stdout_noise",
        ):
            assert outcomes[f"{check}[{profile}]"] == "pass", (check, profile)
        assert outcomes[f"positions[{profile}-conf-required]"] == "pass"
        assert outcomes[f"unregistered_folder[{profile}]"] == "pass"  # all send folders


@pytest.mark.parametrize(
    ("mode", "select", "expected"),
    [
        ("stdout", "vscode", {"no_stdout_noise[vscode]"}),
        ("severity", "vscode", {"severity_table[vscode]"}),
        (
            # Code points equal UTF-16 units until an astral character (an emoji):
            # the toggle's line has none, UTF-32 (emacs) is code points anyway.
            "utf16",
            "vscode or emacs",
            {"positions[vscode-conf-required]", "positions[vscode-conf-informational]"},
        ),
        ("plaintext", "vscode", {"hover_markup[vscode]"}),  # to a Markdown client
        ("markdown", "vscode", {"hover_markup[vscode]"}),  # to a plain-text one
        # Issue 27 (11): the preview's path through a symlink out of the root.
        ("trusting", "plan_paths and vscode", {"plan_paths_jailed[vscode]"}),
    ],
)
def test_a_broken_server_fails_exactly_there(
    tmp_path: Path, mode: str, select: str, expected: set[str]
) -> None:
    command = BROKEN.replace("{mode}", mode)
    run = run_kit(tmp_path, "--acp-conformance=server", "--server-command", command, "-k", select)
    assert run.status == 1, run.output[-3000:]
    assert run.failed() == expected, {c: run.reason(c) for c in run.failed()}


def test_an_lsp_specification_warning_fails(tmp_path: Path) -> None:
    """pytest-lsp's LspSpecificationWarning is a failure, not a warning."""
    command = BROKEN.replace("{mode}", "spec")
    run = run_kit(
        tmp_path, "--acp-conformance=server", "--server-command", command, "-k", "neovim-0.7"
    )
    assert run.status == 1, run.output[-3000:]
    assert "lsp_specification[neovim-0.7]" in run.failed()
    assert "workspace/configuration" in run.reason("lsp_specification[neovim-0.7]")


def test_acp_lsp_passes_through_a_served_backend(tmp_path: Path) -> None:
    """Kit and server both reach ``acp-backend serve``; the token file is given
    relative to where pytest runs (the server runs elsewhere: it must still work)."""
    data_dir, workdir = tmp_path / "data", tmp_path / "kit"
    data_dir.mkdir()
    workdir.mkdir()
    server = ServerProcess(data_dir)
    server.start()
    try:
        shutil.copy(server.token_file, workdir / "token")
        run = run_kit(
            workdir,
            "--acp-conformance=server",
            "--acp",
            server.url + "/acp/v1",
            "--acp-token-file",
            "token",
            "--server-command",
            f"{sys.executable} -m lsp_server --acp {{acp}} --token-file {{token_file}}",
            "-k",
            "vscode or lsp4ij",
        )
    finally:
        server.stop()
    assert run.status == 0, run.output[-3000:]
    assert run.outcomes()["severity_table[lsp4ij]"] == "pass"
    assert run.outcomes()["plan_paths_jailed[vscode]"] == "pass"  # the relay over HTTP


def test_a_server_that_reached_another_backend_is_told_how_to_reach_the_kits(
    tmp_path: Path,
) -> None:
    """Issue 27 (12): ``--server-command acp-lsp`` without ``{data_dir}``: the
    server uses its own default data dir, where the kit's folder is not
    registered. The failure says so and how to pass the kit's backend."""
    elsewhere = tmp_path / "elsewhere"  # the server's default data dir, not the kit's
    command = f"env XDG_DATA_HOME={elsewhere} {sys.executable} -m lsp_server"
    run = run_kit(
        tmp_path / "kit", "--acp-conformance=server", "--server-command", command,
        "-k", "push_or_pull and vscode", timeout_s=5,
    )  # fmt: skip
    assert run.status == 1, run.output[-3000:]
    reasons = " ".join(run.reason(check) for check in run.failed())
    assert "reached another backend than the kit's" in reasons, reasons
    assert "'--data-dir {data_dir}'" in reasons, reasons
