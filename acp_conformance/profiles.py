"""Client profiles: what each editor says it can do at ``initialize``.

Four are pytest-lsp's recordings of real editors; Helix (not installable
where this was written) and an LSP4IJ-like JetBrains client are described
from their documented behaviour: Helix pushes only, sends no workspace
folders and prefers UTF-8; LSP4IJ pulls diagnostics with refresh and
speaks UTF-16.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import attrs
from lsprotocol import types
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


HELIX = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(
        position_encodings=[
            types.PositionEncodingKind.Utf8,
            types.PositionEncodingKind.Utf32,
            types.PositionEncodingKind.Utf16,
        ]
    ),
    text_document=types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
            version_support=True, data_support=True
        ),
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=["", "quickfix"])
            ),
            data_support=True,
            resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]),
        ),
    ),
    workspace=types.WorkspaceClientCapabilities(
        configuration=True,
        workspace_folders=False,
        apply_edit=True,
        symbol=types.WorkspaceSymbolClientCapabilities(),
        execute_command=types.ExecuteCommandClientCapabilities(),
    ),
    window=types.WindowClientCapabilities(work_done_progress=True),
)


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
            Profile("helix", HELIX, workspace_folders=False),
            Profile("lsp4ij", _lsp4ij()),
        )
    }
