"""What the server announces at ``initialize`` (the commands, the code action
kinds, each feature's registration options) and the settings section it reads.

Kept apart from the features so that registering the handlers loads none of
the features' code, nor the ACP client under it (ADR 0016).
"""

from __future__ import annotations

from lsprotocol import types

# The commands; ``workspace/executeCommand`` advertises exactly these.
RUN_VALIDATIONS = "acp.runValidations"
APPLY_FIX = "acp.applyFix"
FIX_ALL = "acp.fixAll"
PROPOSE_FIX = "acp.proposeFix"
PREVIEW_PLAN = "acp.previewPlan"
APPLY_PLAN = "acp.applyPlan"
CANCEL_PLAN = "acp.cancelPlan"
RERUN_PLAN = "acp.rerunPlan"
COMMANDS = (
    RUN_VALIDATIONS,
    APPLY_FIX,
    FIX_ALL,
    PROPOSE_FIX,
    PREVIEW_PLAN,
    APPLY_PLAN,
    CANCEL_PLAN,
    RERUN_PLAN,
)

FIX_ALL_KIND = "source.fixAll.acp"
VALIDATE_KIND = "source.acp.validate"
PLAN_KIND = "refactor.acp.plan"
KINDS = (types.CodeActionKind.QuickFix, FIX_ALL_KIND, VALIDATE_KIND, PLAN_KIND)

CODE_ACTIONS = types.CodeActionOptions(code_action_kinds=list(KINDS), resolve_provider=True)
DIAGNOSTICS = types.DiagnosticOptions(
    identifier="acp", inter_file_dependencies=False, workspace_diagnostics=True
)
SYMBOLS = types.WorkspaceSymbolOptions(resolve_provider=True)

SECTION = "acp"
"""The settings section (``workspace/configuration``, ``acp.*`` in editors)."""


def unwrap_section(options: object) -> object:
    """``initializationOptions`` may carry the settings directly or under ``acp``."""
    if isinstance(options, dict) and isinstance(options.get(SECTION), dict):
        return options[SECTION]
    return options
