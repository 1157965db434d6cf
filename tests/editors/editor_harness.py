"""Shared by the real-editor tests: a fresh backend data dir, a temp copy of
examples/demo registered in it, the environment an editor runs acp-lsp in,
and the skip-outside-CI-only rule for missing editors."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DEMO = ROOT / "examples" / "demo"
VSCODE_EXTENSION = ROOT / "editors" / "vscode"
EDITOR_TIMEOUT_S = 30


def require_editor(
    executable: Path | None, what: str, install: str = "run .ci/install-editors"
) -> Path:
    """The editor's binary; without it skip outside CI, and fail in CI, where
    it must have been installed."""
    if executable is not None and executable.is_file():
        return executable
    reason = f"{what} is not installed ({install})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; editor tests never skip in CI")
    pytest.skip(reason)


def which(name: str) -> Path | None:
    found = shutil.which(name)
    return Path(found) if found else None


def build_vscode_extension() -> Path:
    """npm, once editors/vscode is compiled (tsc) against its npm ci-installed dependencies."""
    npm = require_editor(which("npm"), "Node.js with npm")
    require_editor(
        VSCODE_EXTENSION / "node_modules" / ".package-lock.json", "editors/vscode's npm deps"
    )
    run_ok([str(npm), "run", "--silent", "build"], VSCODE_EXTENSION, timeout=120)
    return npm


def run_ok(command: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a build step; a failure fails the test with its output."""
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, check=False, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@dataclass(frozen=True)
class Finding:
    """Where one of the demo's known problems is, for asserting what an editor shows."""

    line: int  # 0-based
    codepoint_column: int
    line_text: str

    @property
    def utf8_column(self) -> int:
        """Neovim keeps byte columns."""
        return len(self.line_text[: self.codepoint_column].encode("utf-8"))

    @property
    def utf16_column(self) -> int:
        return len(self.line_text[: self.codepoint_column].encode("utf-16-le")) // 2


@dataclass(frozen=True)
class DemoProject:
    root: Path
    data_dir: Path
    env: dict[str, str]

    @property
    def greetings(self) -> Path:
        """The file with an undefined name after emoji and CJK text (ruff, required:
        Error) and a TODO marker (the informational finder: Warning)."""
        return self.root / "greetings.py"

    def typo(self) -> Finding:
        return self._find("nmae")

    def todo(self) -> Finding:
        return self._find("# TODO")

    def _find(self, needle: str) -> Finding:
        for number, line in enumerate(self.greetings.read_text(encoding="utf-8").splitlines()):
            if needle in line:
                return Finding(number, line.index(needle), line)
        raise AssertionError(f"examples/demo/greetings.py no longer contains {needle!r}")


# For completion in a suppression comment: ruff's unused import in inventory.py.
SUPPRESSED_CODE = "F401"

# Appended to the demo's acp.toml: a validation whose own PATH has no mypy,
# so the mypy preset says its tool is missing.
WITHOUT_MYPY = """
[[validations]]
preset = "mypy"
mode = "informational"
applies_to = ["*.nothing"]
env = { PATH = "/nonexistent" }
"""


def ruff_codes(root: Path, file: str) -> dict[str, set[int]]:
    """Every code ruff reports in the demo at ``root``, each with its 0-based
    lines in ``file`` (none for a code found only elsewhere)."""
    done = subprocess.run(
        [str(BIN / "ruff"), "check", "--output-format", "json", "--no-cache", "."],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=EDITOR_TIMEOUT_S,
    )
    codes: dict[str, set[int]] = {}
    for finding in json.loads(done.stdout):
        lines = codes.setdefault(finding["code"], set())
        if Path(finding["filename"]).resolve() == (root / file).resolve():
            lines.add(finding["location"]["row"] - 1)
    return codes


def make_demo_project(tmp_path: Path) -> DemoProject:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".*_cache", "__pycache__"))
    # Inside a larger git checkout, as examples/demo is in this repository:
    # every editor must still take the acp.toml folder as the server's root.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
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
    return DemoProject(root, data_dir, env)


def run_editor(
    command: list[str], project: DemoProject, extra_env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run a headless editor in the demo project; a hang fails the test, never
    the suite. The servers it started must end with it: one still running
    SERVER_EXIT_S after the editor quit fails the test (and is killed)."""
    env = {**project.env, **extra_env}
    try:
        done = subprocess.run(
            command,
            cwd=project.root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            timeout=EDITOR_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{command[0]} did not finish in {EDITOR_TIMEOUT_S} s: {exc.stderr!r}")
    left = servers_left(env["XDG_DATA_HOME"])
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"acp-lsp still running {SERVER_EXIT_S} s after {command[0]} quit: {left}"
    return done


SERVER_EXIT_S = 10.0


def servers_left(data_home: str) -> list[int]:
    """The acp-lsp processes started with this XDG_DATA_HOME (each test has
    its own) still running after SERVER_EXIT_S."""
    deadline = time.monotonic() + SERVER_EXIT_S
    while True:
        running = [
            pid for pid in _acp_lsp_processes() if _environ(pid).get("XDG_DATA_HOME") == data_home
        ]
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.1)


def _acp_lsp_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if any(arg.endswith((b"acp-lsp", b"lsp_server")) for arg in argv):
                    found.append(int(entry.name))
    return found


def _environ(pid: int) -> dict[str, str]:
    with contextlib.suppress(OSError):
        raw = Path(f"/proc/{pid}/environ").read_bytes()
        pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
        return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}
    return {}
