"""The VS Code extension in editors/vscode: its launch code (where it finds
the server, the Python extension's selected interpreter among the places;
VS Code's client protocol against the real server), its settings
against the server's model, its manifest and its packaging. The extension in a
real VS Code is test_vscode_host.py."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from editor_harness import (
    EDITOR_TIMEOUT_S,
    VSCODE_EXTENSION,
    DemoProject,
    build_vscode_extension,
    require_editor,
    run_editor,
    run_ok,
    which,
)

from lsp_server.advertised import SECTION
from lsp_server.settings import settings_schema

EXTENSION = VSCODE_EXTENSION
# pytest-lsp's recording of the capabilities VS Code sends.
VSCODE_CAPABILITIES = (
    Path(pytest_lsp.__file__).parent / "clients" / "visual_studio_code_v1.65.2.json"
)


@pytest.fixture(scope="module")
def npm() -> Path:
    return build_vscode_extension()


def test_extension_client_code(npm: Path, demo_project: DemoProject) -> None:
    node = require_editor(which("node"), "Node.js")
    completed = run_editor(
        [str(node), "--test", str(EXTENSION / "out" / "test")],
        demo_project,
        {
            "ACP_DEMO_DIR": str(demo_project.root),
            "ACP_VSCODE_CAPABILITIES": str(VSCODE_CAPABILITIES),
        },
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    # diagnostics.test.ts (1), launch.test.ts (9: where the server is found,
    # the notification and its install line) and python.test.ts (3: the
    # Python extension's selected interpreter)
    assert "# pass 13" in completed.stdout and "# fail 0" in completed.stdout, completed.stdout


def expected_contributions() -> dict[str, dict[str, Any]]:
    """contributes.configuration entries for the server's settings, from its model."""
    schema = settings_schema()
    entries = {}
    for name, field in schema["properties"].items():
        ref = field.get("$ref", "").rsplit("/", 1)[-1]  # enums live in $defs
        prop = {**schema["$defs"][ref], **field} if ref else field
        entry = {"type": prop["type"], "default": prop["default"]}
        entry.update({key: prop[key] for key in ("enum", "minimum", "maximum") if key in prop})
        # Descriptions use Markdown (`code`), which VS Code renders only from this key.
        entry["markdownDescription"] = prop["description"]
        entries[f"{SECTION}.{name}"] = entry
    return entries


def test_extension_settings_match_the_server_model() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]
    contributed = {key: value for key, value in properties.items() if key.startswith(f"{SECTION}.")}
    expected = expected_contributions()
    assert contributed == expected, (
        "editors/vscode/package.json has drifted from lsp_server/settings.py; "
        f"the server's settings as VS Code contributions:\n{json.dumps(expected, indent=2)}"
    )


def test_extension_packs_into_a_vsix(npm: Path, tmp_path: Path) -> None:
    vsix = tmp_path / "acp-lsp.vsix"
    package = [str(npm), "run", "--silent", "package", "--", "--out", str(vsix)]
    run_ok(package, EXTENSION, timeout=EDITOR_TIMEOUT_S * 2)
    names = set(zipfile.ZipFile(vsix).namelist())
    assert "extension/out/src/extension.js" in names
    assert "extension/node_modules/vscode-languageclient/package.json" in names
    assert not any(name.startswith("extension/out/test/") for name in names)


def test_extension_stays_off_in_untrusted_workspaces() -> None:
    """acp-lsp runs the commands in acp.toml: VS Code must keep the extension
    off until the user trusts the folder, and say why."""
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    untrusted = manifest["capabilities"]["untrustedWorkspaces"]
    assert untrusted["supported"] is False
    assert "acp.toml" in untrusted["description"]


def test_extension_registers_the_commands_it_contributes() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    contributed = {
        command["command"]: command["title"] for command in manifest["contributes"]["commands"]
    }
    assert contributed == {"acpLsp.restart": "Restart ACP language server"}
    source = (EXTENSION / "src" / "extension.ts").read_text(encoding="utf-8")
    for command in contributed:
        assert f"registerCommand('{command}'" in source, (
            f"{command} is contributed but never registered"
        )
