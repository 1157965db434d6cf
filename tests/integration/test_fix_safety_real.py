"""A fix is as safe as its tool says (issue 27, item 10), on a real code base.

httpx's source (installed beside acp-lsp: the client depends on it) is
fixed twice with a broad ruff rule set, once by ruff itself and once by
``acp-lsp check --fix`` through the ruff preset: the same files come out
with the same text, and with ``--unsafe-fixes`` on both sides too. The
rule set is one where ruff calls some fixes unsafe, so the two runs differ
from each other: a bulk fix that ignored ruff's word would match neither.
"""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

BIN = Path(sys.executable).parent
RUFF_TOML = """\
target-version = "py311"
[lint]
select = ["F", "UP", "SIM", "C4", "I", "RET"]
"""
ACP_TOML = '[[validations]]\npreset = "ruff"\nmode = "required"\n'


def code_base(where: Path) -> Path:
    shutil.copytree(
        Path(httpx.__file__).parent, where, ignore=shutil.ignore_patterns("__pycache__")
    )
    (where / "ruff.toml").write_text(RUFF_TOML)
    (where / "acp.toml").write_text(ACP_TOML)
    return where


def differing(left: Path, right: Path) -> list[str]:
    """Files whose text differs, or that only one side has (recursively)."""
    found: list[str] = []

    def walk(compared: filecmp.dircmp[str], prefix: str) -> None:
        found.extend(prefix + name for name in compared.left_only + compared.right_only)
        found.extend(prefix + name for name in compared.diff_files)
        for name, sub in compared.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(left, right, ignore=[".ruff_cache", "__pycache__"]), "")
    return sorted(found)


def fixed_by_ruff(tmp_path: Path, *unsafe: str) -> Path:
    root = code_base(tmp_path / "by-ruff")
    subprocess.run(  # exits 1: findings it cannot fix remain
        [str(BIN / "ruff"), "check", "--fix", *unsafe, "."],
        cwd=root,
        capture_output=True,
        check=False,
    )
    return root


def fixed_by_acp_lsp(tmp_path: Path, *unsafe: str) -> Path:
    root = code_base(tmp_path / "by-acp-lsp")
    data = tmp_path / "data"
    done = subprocess.run(
        [
            str(BIN / "acp-lsp"),
            "check",
            "--data-dir",
            str(data),
            "--register",
            "--fix",
            *unsafe,
            ".",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: findings ruff cannot fix remain
    assert "applied plan" in done.stderr
    return root


@pytest.mark.parametrize("unsafe", [(), ("--unsafe-fixes",)], ids=["safe", "unsafe"])
def test_check_fix_changes_what_ruff_fix_changes(tmp_path: Path, unsafe: tuple[str, ...]) -> None:
    theirs = fixed_by_ruff(tmp_path, *unsafe)
    ours = fixed_by_acp_lsp(tmp_path, *unsafe)
    assert differing(ours, theirs) == []
    assert differing(ours, code_base(tmp_path / "untouched")) != []  # it did fix something


def test_the_rule_set_has_unsafe_fixes_that_ruff_leaves_alone(tmp_path: Path) -> None:
    """What makes the test above able to fail: the two runs of ruff differ."""
    safe = fixed_by_ruff(tmp_path / "safe")
    unsafe = fixed_by_ruff(tmp_path / "unsafe", "--unsafe-fixes")
    assert len(differing(safe, unsafe)) >= 3
