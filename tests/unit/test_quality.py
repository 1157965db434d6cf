"""The project's own hygiene, checked with the suite so CI enforces it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    executable = BIN / tool if (BIN / tool).exists() else shutil.which(tool)
    if executable is None:
        pytest.fail(f"{tool} is not installed: pip install -e '.[test]'")
    return subprocess.run(
        [str(executable), *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_is_clean() -> None:
    result = run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = run("ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(block) == 2, "the README starts with exactly two commands"
    assert "pytest" in block[1]
    assert "README.md" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_no_file_keeps_a_merge_conflict_marker() -> None:
    """A conflict resolved by hand once left both sides in a document."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.md", "*.py", "*.toml", "*.json", "*.lua", "*.el"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    marked = [
        name
        for name in listed.stdout.decode().split("\0")
        if name
        and (ROOT / name).is_file()
        and any(
            line.startswith(("<<<<<<< ", ">>>>>>> "))
            for line in (ROOT / name).read_text(encoding="utf-8", errors="replace").splitlines()
        )
    ]
    assert marked == []
