"""``validation.schema``: what an ``acp.toml`` may declare, for editors.

Everything here is read from the declaration's own model (``_Declaration``:
its keys, types, defaults and descriptions), the StrEnums and the presets,
so the answer cannot drift from what ``parse_config`` accepts.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from acp_backend.validation.config import (
    DECLARATION,
    FORMAT_DOCS,
    NESTED_TABLES,
    UNIT_DOCS,
    ValidationConfig,
    preset_fills,
)
from acp_backend.validation.presets import PRESETS
from acp_backend.validation.runner import validator_environment
from acp_client.operations import ConfigChoice, ConfigField, PresetInfo, ValidationSchemaResult


def validation_schema(
    root: Path | None = None, declared: Iterable[ValidationConfig] = ()
) -> ValidationSchemaResult:
    """The schema; presets' tools are looked up on PATH as validators run: from
    ``root`` (a resource's), with the env and cwd of the validation that
    uses the preset there, if one does."""
    by_preset: dict[str, ValidationConfig] = {}
    for config in declared:
        if config.preset is not None:
            by_preset.setdefault(config.preset, config)
    presets = tuple(_preset_info(name, search_path(root, by_preset.get(name))) for name in PRESETS)
    fields, formats, units = _static_parts()
    return ValidationSchemaResult(
        fields=fields, presets=presets, formats=formats, column_units=units
    )


def search_path(root: Path | None, config: ValidationConfig | None = None) -> str:
    """The PATH a validator searches: the backend's (``validator_environment``),
    replaced by the validation's ``env`` PATH if it sets one; relative entries
    count from the directory it runs in (``root``/``cwd``), as exec does."""
    env = validator_environment()
    if config is not None and config.env:
        env = {**env, **config.env}
    path = env.get("PATH", os.defpath)
    if root is None:
        return path
    cwd = root / config.cwd if config is not None and config.cwd else root
    return os.pathsep.join(
        entry if os.path.isabs(entry) else str(cwd / entry) for entry in path.split(os.pathsep)
    )


def _preset_info(name: str, path: str) -> PresetInfo:
    preset = PRESETS[name]
    found = shutil.which(preset.executable, path=path)
    return PresetInfo(
        name=name,
        summary=preset.summary,
        fields=preset_fills(name),
        executable=preset.executable,
        on_path=found is not None,
        found_at=found,
        install=preset.install,
    )


@functools.cache
def _static_parts() -> tuple[
    tuple[ConfigField, ...], tuple[ConfigChoice, ...], tuple[ConfigChoice, ...]
]:
    fields = _fields(DECLARATION)
    formats = tuple(ConfigChoice(name=str(f), doc=doc) for f, doc in FORMAT_DOCS.items())
    units = tuple(ConfigChoice(name=str(u), doc=doc) for u, doc in UNIT_DOCS.items())
    return fields, formats, units


def _fields(model: type[BaseModel]) -> tuple[ConfigField, ...]:
    properties = model.model_json_schema()["properties"]
    fields = []
    for name, info in model.model_fields.items():
        kinds = [
            kind
            for alternative in properties[name].get("anyOf", [properties[name]])
            if (kind := _kind(alternative)) is not None
        ]
        words = list(dict.fromkeys(word for word, _ in kinds))
        values = next((values for _, values in kinds if values), ())
        if name == "preset":  # a name from the presets table, checked by parse_config
            words, values = ["enumeration"], tuple(PRESETS)
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        fields.append(
            ConfigField(
                name=name,
                type=words[0],
                also_accepts=tuple(words[1:]),
                values=tuple(values),
                default=default,
                required=info.is_required(),
                doc=info.description or "",
                fields=_fields(NESTED_TABLES[name]) if name in NESTED_TABLES else (),
            )
        )
    return tuple(fields)


def _kind(node: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """A JSON Schema node as a short type word and its allowed values, None for null."""
    if "$ref" in node:
        return "table", ()
    if "enum" in node:
        return "enumeration", tuple(node["enum"])
    if "const" in node:
        return "enumeration", (node["const"],)
    kind = node.get("type")
    if kind == "null":
        return None
    if kind == "array":
        item = _kind(node.get("items", {}))
        plural = {"string": "strings", "integer": "integers", "enumeration": "strings"}
        return f"array of {plural.get(item[0], 'values') if item else 'values'}", ()
    if kind == "object":
        values = node.get("additionalProperties")
        inner = _kind(values) if isinstance(values, dict) else None
        return "table", inner[1] if inner else ()
    return {"number": "number", "integer": "integer", "boolean": "boolean"}.get(
        str(kind), "string"
    ), ()
