"""The architecture's arrows: lsp_server -> acp_client <- acp_backend, and the
conformance kit (acp_conformance) -> acp_client only: it checks any backend
and any server as a client does, never through their internals.

Checked twice: statically (every import statement in every module, including
ones inside functions) and dynamically (importing every module of a package
in a fresh interpreter must not load a forbidden sibling).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = {
    "acp_client": {"lsp_server", "acp_backend", "acp_conformance"},
    "lsp_server": {"acp_backend", "acp_conformance"},
    "acp_backend": {"lsp_server", "acp_conformance"},
    "acp_conformance": {"lsp_server", "acp_backend"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def modules_of(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_module_imports_a_forbidden_sibling(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & FORBIDDEN[package])
        for path in modules_of(package)
    }
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_importing_a_package_loads_no_forbidden_sibling(package: str) -> None:
    modules = [
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for path in modules_of(package)
        if path.name != "__main__.py"
    ]
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert loaded & FORBIDDEN[package] == set()


def test_the_checker_catches_a_reversed_arrow(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from acp_backend.store import Store\n")
    assert "acp_backend" in imported_packages(module)


def test_every_package_ships_py_typed() -> None:
    for package in FORBIDDEN:
        assert (ROOT / package / "py.typed").is_file(), package
