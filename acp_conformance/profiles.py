"""Client profiles: what each editor says it can do at ``initialize``.

Four are pytest-lsp's recordings of real editors. Helix 25.07 and Helix
master are transcribed from Helix's source (``clients/*.json`` names where):
25.07 pushes only, sends workspace folders and prefers UTF-8; master pulls
with refresh. An LSP4IJ-like JetBrains client is described from its
documented behaviour: it pulls diagnostics with refresh and speaks UTF-16.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import client_capabilities


def encoding_name(encoding: object) -> str:
    """``"utf-8"`` for ``PositionEncodingKind.Utf8`` as for the plain string."""
    return str(encoding.value if isinstance(encoding, Enum) else encoding)


@dataclass(frozen=True)
class Profile:
    name: str
    capabilities: types.ClientCapabilities
    workspace_folders: bool = True

    @property
    def can_pull(self) -> bool:
        text, workspace = self.capabilities.text_document, self.capabilities.workspace
        return bool(
            text is not None
            and text.diagnostic is not None
            and workspace is not None
            and workspace.diagnostics is not None
            and workspace.diagnostics.refresh_support
        )

    @property
    def encodings(self) -> list[str]:
        general = self.capabilities.general
        offered = general.position_encodings if general is not None else None
        return [encoding_name(e) for e in offered] if offered else ["utf-16"]

    @property
    def hover_formats(self) -> list[str]:
        """The hover content formats the client announces, preferred first."""
        text = self.capabilities.text_document
        hover = text.hover if text is not None else None
        formats = hover.content_format if hover is not None else None
        return [encoding_name(f) for f in formats or ()]


def plaintext_hover(profile: Profile) -> Profile:
    """``profile`` announcing plain text as its only hover content format."""
    base = profile.capabilities
    text = base.text_document or types.TextDocumentClientCapabilities()
    hover = text.hover or types.HoverClientCapabilities()
    plain = attrs.evolve(hover, content_format=[types.MarkupKind.PlainText])
    return Profile(
        f"{profile.name}, plain-text hover",
        attrs.evolve(base, text_document=attrs.evolve(text, hover=plain)),
        profile.workspace_folders,
    )


CLIENTS = Path(__file__).with_name("clients")
"""Recorded profiles of clients pytest-lsp has none for (JSON, with their source)."""


def recorded(name: str) -> dict[str, Any]:
    """A recorded profile: ``{"source", "clientInfo", "capabilities"}``."""
    profile: dict[str, Any] = json.loads((CLIENTS / name).read_text(encoding="utf-8"))
    return profile


def _recorded_capabilities(name: str) -> types.ClientCapabilities:
    raw = recorded(name)["capabilities"]
    capabilities: types.ClientCapabilities = get_converter().structure(
        raw, types.ClientCapabilities
    )
    return capabilities


def with_pull(base: types.ClientCapabilities) -> types.ClientCapabilities:
    """``base`` plus pull diagnostics with ``workspace/diagnostic/refresh``."""
    assert base.text_document is not None and base.workspace is not None
    return attrs.evolve(
        base,
        text_document=attrs.evolve(
            base.text_document,
            diagnostic=types.DiagnosticClientCapabilities(related_document_support=False),
        ),
        workspace=attrs.evolve(
            base.workspace,
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
        ),
    )


def _lsp4ij() -> types.ClientCapabilities:
    utf16 = types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16])
    return attrs.evolve(with_pull(client_capabilities("visual-studio-code")), general=utf16)


def profiles() -> dict[str, Profile]:
    return {
        profile.name: profile
        for profile in (
            Profile("vscode", client_capabilities("visual-studio-code")),
            Profile("neovim-0.7", client_capabilities("neovim@v0.7")),
            Profile("neovim-0.11", client_capabilities("neovim@v0.11")),
            Profile("emacs", client_capabilities("emacs")),
            Profile("helix", _recorded_capabilities("helix_25.07.json")),
            Profile("helix-master", _recorded_capabilities("helix_master.json")),
            Profile("lsp4ij", _lsp4ij()),
        )
    }
