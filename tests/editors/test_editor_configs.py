"""The editor setups that no test here can run for real (Helix and JetBrains
are not installable) and the settings docs, checked against the server itself."""

from __future__ import annotations

import json
import tomllib

from editor_harness import ROOT

from lsp_server.settings import Settings, settings_schema

EDITORS = ROOT / "editors"


def console_script() -> str:
    """The command pip installs for the language server."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (name,) = (n for n, target in pyproject["project"]["scripts"].items() if "lsp_server" in target)
    return name


# Helix 25.07's languages.toml (tag 25.07 of helix-editor/helix): the lists
# that a user's `language-servers` replaces, so ours must keep them.
HELIX_25_07_SERVERS = {"python": ["ty", "ruff", "jedi", "pylsp"], "toml": ["taplo", "tombi"]}


def test_helix_languages_toml_adds_the_server_to_helix_defaults() -> None:
    text = (EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8")
    config = tomllib.loads(text)
    server = config["language-server"]["acp-lsp"]
    assert server["command"] == console_script()
    assert server["required-root-patterns"] == ["acp.toml"]
    languages = {language["name"]: language for language in config["language"]}
    assert languages.keys() == HELIX_25_07_SERVERS.keys()
    for name, defaults in HELIX_25_07_SERVERS.items():
        assert languages[name]["language-servers"] == [*defaults, "acp-lsp"], name
    assert "Helix 25.07" in text  # the version those lists come from


def test_jetbrains_template_runs_the_server_on_python_and_acp_toml() -> None:
    template_dir = EDITORS / "jetbrains" / "acp-lsp"
    template = json.loads((template_dir / "template.json").read_text(encoding="utf-8"))
    assert template["programArgs"]["default"] == console_script()
    patterns = {p for m in template["fileTypeMappings"] for p in m["fileType"]["patterns"]}
    assert {"*.py", "acp.toml"} <= patterns


def test_jetbrains_settings_are_the_server_defaults() -> None:
    settings = json.loads(
        (EDITORS / "jetbrains" / "acp-lsp" / "settings.json").read_text(encoding="utf-8")
    )
    assert settings == {"acp": Settings().model_dump(mode="json", by_alias=True)}


def test_docs_list_every_setting_with_its_default() -> None:
    docs = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    table = [line for line in docs.splitlines() if line.startswith("| `")]
    rows = {line.split("|")[1].strip(): line for line in table}
    for name, prop in settings_schema()["properties"].items():
        assert f"`{name}`" in rows, f"docs/editors.md has no row for setting {name}"
        default = json.dumps(prop["default"]).strip('"')
        assert f"`{default}`" in rows[f"`{name}`"], f"docs/editors.md: wrong default for {name}"
