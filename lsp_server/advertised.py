"""What the server announces at ``initialize`` beyond its handlers: each
feature's registration options and the settings section it reads. The
commands and code action kinds come from ``lsp_server.commands``.

Kept apart from the features so that registering the handlers loads none of
the features' code, nor the ACP client under them (ADR 0016).
"""

from __future__ import annotations

from lsprotocol import types

from lsp_server.commands import KINDS
from lsp_server.completion import TRIGGERS

CODE_ACTIONS = types.CodeActionOptions(code_action_kinds=list(KINDS), resolve_provider=True)
DIAGNOSTICS = types.DiagnosticOptions(
    identifier="acp", inter_file_dependencies=False, workspace_diagnostics=True
)
SYMBOLS = types.WorkspaceSymbolOptions(resolve_provider=True)
COMPLETION = types.CompletionOptions(trigger_characters=list(TRIGGERS))

SECTION = "acp"
"""The settings section (``workspace/configuration``, ``acp.*`` in editors)."""


def unwrap_section(options: object) -> object:
    """``initializationOptions`` may carry the settings directly or under ``acp``."""
    if isinstance(options, dict) and isinstance(options.get(SECTION), dict):
        return options[SECTION]
    return options
