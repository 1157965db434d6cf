"""What an ``acp.toml`` may declare, in words: a key's, a value's or a
preset's documentation as Markdown, from the backend's ``validation.schema``.
Completion lists them and hover on a key shows them, in the same words."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_client.operations import ConfigField, PresetInfo, ValidationSchemaResult


def field_named(schema: ValidationSchemaResult, name: str) -> ConfigField | None:
    return next((field for field in schema.fields if field.name == name), None)


def field_doc(field: ConfigField) -> str:
    """``**mode**`` (enumeration: required, informational), required: its doc."""
    kind = field.type
    if field.values:
        kind += ": " + ", ".join(f"`{value}`" for value in field.values)
    facts = [kind]
    if field.required:
        facts.append("required")
    if field.default is not None:
        facts.append(f"default `{json.dumps(field.default)}`")
    return f"**{field.name}** ({'; '.join(facts)})\n\n{field.doc}".rstrip()


def preset_doc(preset: PresetInfo) -> str:
    """What ``preset = NAME`` runs and fills in, and whether its tool is there."""
    found = (
        f"`{preset.executable}` found at `{preset.found_at}`"
        if preset.on_path
        else f"`{preset.executable}` is not on PATH: {preset.install}"
    )
    return f"**{preset.name}**: {preset.summary}\n\n{found}\n\n```toml\n{_toml(preset.fields)}\n```"


def choices(schema: ValidationSchemaResult, field: ConfigField) -> Mapping[str, str]:
    """The values a key takes, each with its doc where the schema has one."""
    explained = {"format": schema.formats, "columns": schema.column_units}.get(field.name, ())
    docs = {choice.name: choice.doc for choice in explained}
    return {value: docs.get(value, "") for value in field.values}


def _toml(fields: Mapping[str, object]) -> str:
    """A preset's fields as they would be written (JSON values are TOML's here)."""
    return "\n".join(f"{key} = {_value(value)}" for key, value in fields.items())


def _value(value: object) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f"{key} = {_value(item)}" for key, item in value.items())
        return f"{{ {inner} }}"
    return json.dumps(value, ensure_ascii=False)
