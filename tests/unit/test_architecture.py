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


# --- inside lsp_server: features by capability, requests by snapshot --------

FEATURES = ROOT / "lsp_server" / "features"
SESSION_INTERNALS = {
    "lsp_server.server",
    "lsp_server.session",
    "lsp_server.mirror",
    "lsp_server.handlers",
}
"""What no feature may import: features reach the session only through the
snapshot, the editor port and the calls they are given."""


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module (and imported name) an import statement in ``path`` names,
    relative imports resolved against ``path``'s package under ``root``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parts = path.relative_to(root).with_suffix("").parts
    package = parts[:-1]  # a module's package; a package's __init__ is the package
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def feature_offences(root: Path = ROOT) -> dict[str, list[str]]:
    """What each feature's modules import of another feature or of the session."""
    features = root / "lsp_server" / "features"
    names = sorted(p.name for p in features.iterdir() if (p / "__init__.py").is_file())
    offences: dict[str, list[str]] = {}
    for name in names:
        forbidden = [f"lsp_server.features.{n}" for n in names if n != name]
        forbidden += sorted(SESSION_INTERNALS)
        for path in sorted((features / name).rglob("*.py")):
            bad = sorted(
                module
                for module in imported_modules(path, root)
                if any(module == f or module.startswith(f"{f}.") for f in forbidden)
            )
            if bad:
                offences[str(path.relative_to(features))] = bad
    return offences


def test_the_features_are_the_rooms_the_design_names() -> None:
    features = ROOT / "lsp_server" / "features"
    assert sorted(p.name for p in features.iterdir() if (p / "__init__.py").is_file()) == [
        "declarations",
        "diagnostics",
        "fixes",
        "hover",
        "plans",
        "suppress",
        "symbols",
        "validations",
    ]


def test_no_feature_imports_another_feature_or_the_session() -> None:
    assert feature_offences() == {}


def test_the_feature_check_catches_a_sideways_import(tmp_path: Path) -> None:
    features = tmp_path / "lsp_server" / "features"
    for name, text in {
        "fixes": "from lsp_server.features.plans import Plans\n",
        "plans": "def f():\n    from ..fixes import edit\n",
        "hover": "from lsp_server.session import Session\n",
        "symbols": "from . import index\nfrom .index import Symbol\n",
    }.items():
        (features / name).mkdir(parents=True)
        (features / name / "__init__.py").write_text(text)
    assert feature_offences(tmp_path) == {
        "fixes/__init__.py": ["lsp_server.features.plans", "lsp_server.features.plans.Plans"],
        "plans/__init__.py": ["lsp_server.features.fixes", "lsp_server.features.fixes.edit"],
        "hover/__init__.py": ["lsp_server.session", "lsp_server.session.Session"],
    }


def _request_handlers() -> list[ast.AsyncFunctionDef | ast.FunctionDef]:
    """The handlers ``lsp_server/handlers.py`` registers for LSP requests
    (methods with a response; the lifecycle's initialize and shutdown aside)."""
    from lsprotocol import types

    tree = ast.parse((ROOT / "lsp_server" / "handlers.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and decorator.args):
                continue
            name = decorator.args[0]
            if not (isinstance(name, ast.Attribute) and name.attr.isupper()):
                continue
            method = getattr(types, name.attr)
            if method in (types.INITIALIZE, types.SHUTDOWN):
                continue
            if types.METHOD_TO_TYPES[method][1] is not None:  # a request: it has a response
                found.append(node)
    return found


def test_every_request_handler_hands_its_feature_a_snapshot() -> None:
    handlers = _request_handlers()
    assert {h.name for h in handlers} >= {"hover", "code_action", "document_diagnostic"}
    for handler in handlers:
        calls = [n for n in ast.walk(handler) if isinstance(n, ast.Call)]
        takes = [
            c
            for c in calls
            if isinstance(c.func, ast.Attribute)
            and isinstance(c.func.value, ast.Name)
            and c.func.value.id == "ls"
            and c.func.attr == "snapshot"
        ]
        assert takes, f"{handler.name} takes no snapshot"
        handed = [
            c
            for c in calls
            if (isinstance(c.func, ast.Attribute) and "features" in ast.unparse(c.func))
            or ast.unparse(c.func) in ("code_actions.offered", "completion.completed")
        ]
        assert handed, f"{handler.name} hands nothing to a feature"
        for call in handed:
            first = call.args[0] if call.args else None
            assert isinstance(first, ast.Name) and first.id == "snapshot", ast.unparse(call)


def test_what_a_feature_answers_a_request_with_takes_a_snapshot_first() -> None:
    import inspect
    import typing

    from lsp_server.features.loaded import Features

    answering = ("document_report", "workspace_report", "resolve", "hover", "query")
    checked = 0
    for feature in typing.get_type_hints(Features).values():
        for name in answering:
            method = getattr(feature, name, None)
            if inspect.isfunction(method):
                first = list(inspect.signature(method).parameters)[1]
                assert typing.get_type_hints(method)[first].__name__ == "Snapshot", name
                checked += 1
    assert checked == len(answering) + 1  # symbols resolve too
