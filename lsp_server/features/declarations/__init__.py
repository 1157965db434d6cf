"""Completion in ``acp.toml``: the keys of a ``[[validations]]`` table and
their values (presets, modes, formats, column units and the other
enumerations), each with its documentation.

Everything comes from the backend's ``validation.schema``, held in the
snapshot (fetched when the resource is listed and when ``acp.toml`` is
saved): typing costs no backend call. A preset whose tool is not on PATH
says so. The file need not parse: ``lsp_server.toml_place`` reads the
table the cursor is in line by line. A backend without the operation
offers nothing here (said once, in the log).
"""

from __future__ import annotations

from collections.abc import Iterable

from lsprotocol import types

from acp_client.operations import ConfigField
from acp_client.paths import CONFIG_FILE
from lsp_server.completion import CompletionRequest
from lsp_server.declared import choices, field_doc, field_named, preset_doc
from lsp_server.features import Feature
from lsp_server.toml_place import Place, place

BOOLEAN = "boolean"


class Declarations(Feature):
    def completions(self, request: CompletionRequest) -> Iterable[types.CompletionItem]:
        snapshot = request.snapshot
        schema, placement, document = snapshot.schema, snapshot.placement, snapshot.document
        if schema is None or placement is None or document is None:
            return
        if placement.logical_path != CONFIG_FILE:
            return
        where = place(document.lines, request.position.line, request.character)
        if not where.in_validations:
            return
        edit = request.replacing(where.start)
        # An opening quote not closed yet (editors without TOML support add
        # none): the value closes it.
        quote = request.text[where.start - 1] if where.quoted else ""
        closing = "" if request.text[request.character :].startswith(quote) else quote
        if where.side == "key":
            yield from _keys(request, schema.fields, where, edit)
        elif where.side == "value" and where.key is not None:
            field = field_named(schema, where.key)
            if field is None:
                return
            if field.name == "preset":
                for preset in schema.presets:
                    missing = "" if preset.on_path else f" ({preset.executable} not on PATH)"
                    detail = preset.summary + missing
                    doc = preset_doc(preset)
                    yield _value(
                        request, preset.name, where, edit, doc=doc, detail=detail, closing=closing
                    )
            elif field.type == BOOLEAN:
                for value in ("true", "false"):
                    doc = field_doc(field)
                    yield _value(request, value, where, edit, doc=doc, detail=None, quoted=False)
            else:
                for value, explained in choices(schema, field).items():
                    doc = explained or field_doc(field)
                    yield _value(request, value, where, edit, doc=doc, detail=None, closing=closing)


def _keys(
    request: CompletionRequest, fields: Iterable[ConfigField], where: Place, edit: types.Range
) -> Iterable[types.CompletionItem]:
    for field in fields:
        if where.keys.get(field.name, edit.start.line) != edit.start.line:
            continue  # set already in this table (on another line than the cursor's)
        yield types.CompletionItem(
            label=field.name,
            kind=types.CompletionItemKind.Property,
            detail=field.type,
            documentation=request.documentation(field_doc(field)),
            sort_text=("0" if field.required else "1") + field.name,
            text_edit=types.TextEdit(range=edit, new_text=f"{field.name} = "),
        )


def _value(
    request: CompletionRequest,
    value: str,
    where: Place,
    edit: types.Range,
    *,
    doc: str,
    detail: str | None,
    quoted: bool = True,
    closing: str = "",
) -> types.CompletionItem:
    """A value; a string is quoted, or completes (and closes) the quote typed."""
    if not quoted:
        written = value
    elif where.quoted:
        written = value + closing
    else:
        written = f'"{value}"'
    return types.CompletionItem(
        label=value,
        kind=types.CompletionItemKind.EnumMember,
        detail=detail,
        documentation=request.documentation(doc),
        filter_text=written,
        text_edit=types.TextEdit(range=edit, new_text=written),
    )
