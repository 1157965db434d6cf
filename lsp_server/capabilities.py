"""What the editor can do, resolved once at ``initialize``.

Handlers and features never dig into raw ``ClientCapabilities``: they read
one of these booleans. A new question about the client is one field here and
one line in ``ClientSupport.of``, tested against the recorded profiles.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    work_done_progress: bool = False
    configuration: bool = False
    apply_edit: bool = False
    document_changes: bool = False
    change_annotations: bool = False
    code_action_literals: bool = False
    code_action_resolve: frozenset[str] = frozenset()
    hover_markdown: bool = False
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
            work_done_progress=bool(_get(caps, "window.work_done_progress")),
            configuration=bool(_get(caps, "workspace.configuration")),
            apply_edit=bool(_get(caps, "workspace.apply_edit")),
            document_changes=bool(_get(caps, "workspace.workspace_edit.document_changes")),
            change_annotations=_get(caps, "workspace.workspace_edit.change_annotation_support")
            is not None,
            code_action_literals=_get(caps, "text_document.code_action.code_action_literal_support")
            is not None,
            code_action_resolve=_strings(
                caps, "text_document.code_action.resolve_support.properties"
            ),
            hover_markdown=types.MarkupKind.Markdown
            in _strings(caps, "text_document.hover.content_format"),
            symbol_resolve=_strings(caps, "workspace.symbol.resolve_support.properties"),
            show_document=bool(_get(caps, "window.show_document.support")),
        )


def pulls(capabilities: types.ClientCapabilities) -> bool:
    """Pull only when the client can pull *and* can be told to pull again:
    a pull client without ``workspace/diagnostic/refresh`` would show new
    results only when it next happens to ask, so it is better served by push."""
    return bool(
        _get(capabilities, "text_document.diagnostic") is not None
        and _get(capabilities, "workspace.diagnostics.refresh_support")
    )
