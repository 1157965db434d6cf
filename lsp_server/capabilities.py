"""What the editor can do, resolved once at ``initialize``.

Handlers and features never dig into raw ``ClientCapabilities``: they read
one of these booleans. A new question about the client is one field here and
one line in ``ClientSupport.of``, tested against the recorded profiles.

Some clients do not do what they announce. ``CLIENT_QUIRKS`` lists the ones we
know, with the evidence (ADR 0013); ``as_it_behaves`` rewrites a client's
``initialize`` to what it really does, before anything reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

import attrs
from lsprotocol import types


def _get(node: object, dotted: str) -> object:
    for part in dotted.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node


def _strings(node: object, dotted: str) -> frozenset[str]:
    found = _get(node, dotted)
    if not isinstance(found, list | tuple):
        return frozenset()
    return frozenset(str(getattr(item, "value", item)) for item in found)


@dataclass(frozen=True)
class ClientSupport:
    """The client's abilities this server acts on."""

    client_name: str = ""
    client_version: str = ""
    pull_diagnostics: bool = False
    related_information: bool = False  # diagnostics may point at other places
    code_description: bool = False  # diagnostics may link to their rule's documentation
    work_done_progress: bool = False
    configuration: bool = False
    apply_edit: bool = False
    document_changes: bool = False
    change_annotations: bool = False
    resource_operations: frozenset[str] = frozenset()  # create / rename / delete
    code_action_literals: bool = False
    code_action_resolve: frozenset[str] = frozenset()
    code_action_disabled: bool = False  # an action may be listed with why it cannot run
    hover_markdown: bool = False
    completion_markdown: bool = False  # completion items' documentation
    completion_label_details: bool = False
    symbol_resolve: frozenset[str] = frozenset()
    show_document: bool = False

    @classmethod
    def of(cls, params: types.InitializeParams) -> ClientSupport:
        caps = params.capabilities
        info = params.client_info
        return cls(
            client_name=info.name if info else "",
            client_version=(info.version or "") if info else "",
            pull_diagnostics=pulls(caps),
            related_information=_diagnostics_take(caps, "related_information"),
            code_description=_diagnostics_take(caps, "code_description_support"),
            work_done_progress=bool(_get(caps, "window.work_done_progress")),
            configuration=bool(_get(caps, "workspace.configuration")),
            apply_edit=bool(_get(caps, "workspace.apply_edit")),
            document_changes=bool(_get(caps, "workspace.workspace_edit.document_changes")),
            change_annotations=_get(caps, "workspace.workspace_edit.change_annotation_support")
            is not None,
            resource_operations=_strings(caps, "workspace.workspace_edit.resource_operations"),
            code_action_literals=_get(caps, "text_document.code_action.code_action_literal_support")
            is not None,
            code_action_resolve=_strings(
                caps, "text_document.code_action.resolve_support.properties"
            ),
            code_action_disabled=bool(_get(caps, "text_document.code_action.disabled_support")),
            hover_markdown=types.MarkupKind.Markdown
            in _strings(caps, "text_document.hover.content_format"),
            completion_markdown=types.MarkupKind.Markdown
            in _strings(caps, "text_document.completion.completion_item.documentation_format"),
            completion_label_details=bool(
                _get(caps, "text_document.completion.completion_item.label_details_support")
            ),
            symbol_resolve=_strings(caps, "workspace.symbol.resolve_support.properties"),
            show_document=bool(_get(caps, "window.show_document.support")),
        )


def _diagnostics_take(capabilities: types.ClientCapabilities, field: str) -> bool:
    """A diagnostic field the client takes, pushed or (LSP 3.18 says so apart)
    pulled: clients before 3.18 announce it for push only and read pulled
    diagnostics with the same code."""
    return any(
        _get(capabilities, f"text_document.{kind}.{field}")
        for kind in ("publish_diagnostics", "diagnostic")
    )


def pulls(capabilities: types.ClientCapabilities) -> bool:
    """Pull only when the client can pull *and* can be told to pull again:
    a pull client without ``workspace/diagnostic/refresh`` would show new
    results only when it next happens to ask, so it is better served by push."""
    return bool(
        _get(capabilities, "text_document.diagnostic") is not None
        and _get(capabilities, "workspace.diagnostics.refresh_support")
    )


@dataclass(frozen=True)
class ColumnQuirk:
    """A client that counts columns in ``unit`` while announcing UTF-16 (LSP's
    default, implied by offering no ``general.positionEncodings``)."""

    client_name: str  # clientInfo.name, exactly
    unit: types.PositionEncodingKind
    evidence: str

    def matches(self, params: types.InitializeParams) -> bool:
        # Offering encodings is what later versions added with the fix, so a
        # client that offers any is past the quirk (and is taken at its word).
        info = params.client_info
        offered = _strings(params.capabilities, "general.position_encodings")
        return info is not None and info.name == self.client_name and not offered


CLIENT_QUIRKS: tuple[ColumnQuirk, ...] = (
    ColumnQuirk(
        client_name="emacs",
        unit=types.PositionEncodingKind.Utf32,
        evidence=(
            "lsp-mode before 9.0 (Debian's 8.0) names itself 'emacs' (its version is "
            "Emacs's, not lsp-mode's), offers no positionEncodings and converts every "
            "column as a character offset; 9.0 offers utf-32 (lsp-mode a655f36)."
        ),
    ),
)


def column_quirk(params: types.InitializeParams) -> ColumnQuirk | None:
    """The known quirk of this client's column unit, if any."""
    return next((quirk for quirk in CLIENT_QUIRKS if quirk.matches(params)), None)


def as_it_behaves(params: types.InitializeParams) -> types.InitializeParams:
    """``params`` with a quirky client offering the one unit it really counts
    in, so that negotiation picks it: positions in both directions (findings
    out, edits and requests in) are then in the client's unit, and the
    answer announces that unit."""
    quirk = column_quirk(params)
    if quirk is None:
        return params
    general = params.capabilities.general or types.GeneralClientCapabilities()
    capabilities = attrs.evolve(
        params.capabilities,
        # The wire string, as a client's JSON arrives (str() of the enum is its name).
        general=attrs.evolve(general, position_encodings=[quirk.unit.value]),
    )
    return attrs.evolve(params, capabilities=capabilities)
