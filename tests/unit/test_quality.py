"""The project's own hygiene, checked with the suite so CI enforces it."""

from __future__ import annotations

import ast
import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TESTS = ROOT / "tests"
TIERS = ("unit", "integration", "e2e", "faults", "conformance", "editors")
SHARED = "support"  # tests/support: what more than one tier uses


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


def python_files(folder: Path) -> list[Path]:
    """The modules under ``folder``, leaving out node packages (code-server's own)."""
    found = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "node_modules" and not d.startswith((".", "_"))]
        found += [Path(here, name) for name in files if name.endswith(".py")]
    return sorted(found)


@functools.cache
def modules_by_folder() -> dict[str, list[str]]:
    """Every module of the tiers and tests/support, dotted, by its bare name."""
    by_name: dict[str, list[str]] = {}
    for folder in (*TIERS, SHARED):
        for path in python_files(TESTS / folder):
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            by_name.setdefault(path.stem, []).append(dotted)
    return by_name


def imported_test_modules(path: Path) -> set[str]:
    """The modules of tests/ that ``path`` imports (anywhere in it), dotted from
    the repository root. A bare name (pytest puts each test's own directory on
    sys.path) counts when no module of that name sits beside ``path`` but one
    does elsewhere under tests/: it resolves only by the accident of another
    directory being on sys.path."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:  # only tests/support is a package
            package = path.parent.relative_to(ROOT).parts
            base = package[: len(package) - node.level + 1]
            names.add(".".join((*base, node.module) if node.module else base))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    found: set[str] = set()
    for name in names:
        first = name.split(".")[0]
        if first == "tests":
            found.add(name)
        elif not (path.parent / f"{first}.py").exists():
            found.update(modules_by_folder().get(first, ()))
    return found


def tier_of(module: str) -> str:
    """``unit`` for ``tests.unit.lsp.x``; a module directly in tests/ is its own."""
    return module.split(".")[1] if module.count(".") else module


def test_every_test_directory_is_a_tier_or_shared() -> None:
    folders = {d.name for d in TESTS.iterdir() if d.is_dir() and not d.name.startswith((".", "_"))}
    assert folders - {*TIERS, SHARED, "fixtures"} == set()


@pytest.mark.parametrize("tier", [*TIERS, SHARED])
def test_no_tier_imports_another(tier: str) -> None:
    """A tier imports only its own modules and tests/support (conftest
    fixtures come by name, not by import); tests/support imports no tier."""
    allowed = {tier, SHARED}
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in imported_test_modules(path) if tier_of(m) not in allowed
        )
        for path in python_files(TESTS / tier)
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_tier_checker_sees_imports_inside_functions_and_bare_names(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "def f():\n    from tests.e2e.editing import Buffers\n    import refusing_facade\n"
    )
    assert imported_test_modules(module) == {"tests.e2e.editing", "tests.faults.refusing_facade"}


def test_the_version_is_written_in_one_place() -> None:
    """``acp_client/version.py``: the package's metadata is built from it,
    and the language server and the backend report it (a second copy in
    pyproject.toml could drift from the one the code reported)."""
    from importlib.metadata import version

    from acp_client.version import __version__
    from lsp_server import __version__ as server_version

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject
    assert 'path = "acp_client/version.py"' in pyproject
    assert version("acp-lsp") == server_version == __version__
