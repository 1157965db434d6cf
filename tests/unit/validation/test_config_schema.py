"""``validation.schema``: read from the declaration's model, the StrEnums and
the presets; presets' tools looked up on the PATH their validators search."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import get_args

import pytest

from acp_backend.validation.config import (
    DECLARATION,
    FORMAT_DOCS,
    NESTED_TABLES,
    UNIT_DOCS,
    ColumnUnit,
    OutputFormat,
    Stream,
    parse_config,
)
from acp_backend.validation.presets import PRESETS
from acp_backend.validation.schema import search_path, validation_schema
from acp_client.models import SeverityHint, SuppressPlace, ValidationMode
from acp_client.operations import ConfigField


def fields_of(fields: tuple[ConfigField, ...]) -> dict[str, ConfigField]:
    return {field.name: field for field in fields}


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_the_fields_are_the_declarations_own_in_its_order() -> None:
    schema = validation_schema()
    assert [field.name for field in schema.fields] == list(DECLARATION.model_fields)
    for field in schema.fields:
        assert field.doc == DECLARATION.model_fields[field.name].description, field.name
        assert field.doc and "\n" not in field.doc, f"{field.name} has no one-line doc"


def test_enumerations_are_the_strenums_values() -> None:
    fields = fields_of(validation_schema().fields)
    assert fields["mode"].values == tuple(ValidationMode)
    assert fields["format"].values == tuple(OutputFormat)
    assert fields["stream"].values == tuple(Stream)
    assert fields["min_level"].values == tuple(SeverityHint)
    assert fields["columns"].values == tuple(ColumnUnit)
    assert fields["preset"].values == tuple(PRESETS)
    for name in ("mode", "format", "stream", "min_level", "columns", "preset"):
        assert fields[name].type == "enumeration", name
    suppress = fields_of(fields["suppress"].fields)
    assert suppress["where"].values == tuple(SuppressPlace)


@pytest.mark.parametrize(
    ("name", "enum"),
    [
        ("mode", ValidationMode),
        ("format", OutputFormat),
        ("stream", Stream),
        ("min_level", SeverityHint),
    ],
)
def test_the_declarations_literals_are_the_strenums(name: str, enum: type[StrEnum]) -> None:
    """acp.toml is read with strict Literals: they must say what the enums say."""
    annotation = DECLARATION.model_fields[name].annotation
    literals = [arg for arg in get_args(annotation) if arg is not type(None)]
    values = get_args(literals[0]) if len(literals) == 1 and get_args(literals[0]) else literals
    assert tuple(values) == tuple(enum)


def test_types_defaults_and_what_must_be_written() -> None:
    fields = fields_of(validation_schema().fields)
    assert (fields["command"].type, fields["command"].also_accepts) == (
        "array of strings",
        ("string",),
    )
    assert (fields["columns"].type, fields["columns"].also_accepts) == ("enumeration", ("table",))
    assert fields["code_columns"].type == "table"
    assert fields["code_columns"].values == tuple(ColumnUnit)  # the table's values
    assert (fields["timeout"].type, fields["timeout"].default) == ("number", 120.0)
    assert (fields["ok_status"].type, fields["ok_status"].default) == ("array of integers", [0])
    assert (fields["shell"].type, fields["shell"].default) == ("boolean", False)
    assert fields["format"].default == "exit-code"
    assert fields["applies_to"].default == [] and fields["env"].default == {}
    assert {name for name, field in fields.items() if field.required} == {
        "name",
        "mode",
        "command",
    }
    mapping = fields_of(fields["mapping"].fields)
    assert list(mapping) == list(NESTED_TABLES["mapping"].model_fields)
    assert mapping["findings"].required and mapping["one_based_lines"].default is True
    suppress = fields_of(fields["suppress"].fields)
    assert suppress["comment"].required
    assert (suppress["where"].default, suppress["separator"].default) == ("line", ", ")
    assert suppress["code"].default == "{code}"


def test_formats_and_column_units_each_have_a_doc() -> None:
    schema = validation_schema()
    assert [f.name for f in schema.formats] == list(OutputFormat)
    assert [u.name for u in schema.column_units] == list(ColumnUnit)
    assert set(FORMAT_DOCS) == set(OutputFormat) and set(UNIT_DOCS) == set(ColumnUnit)
    assert all(choice.doc for choice in (*schema.formats, *schema.column_units))


def test_presets_say_what_they_fill_in_as_written_in_acp_toml() -> None:
    presets = {preset.name: preset for preset in validation_schema().presets}
    assert list(presets) == list(PRESETS)
    ruff = presets["ruff"]
    assert ruff.executable == "ruff" and ruff.install == "pip install ruff"
    assert ruff.fields["name"] == "ruff" and ruff.fields["mode"] == "required"
    assert ruff.fields["format"] == "json"
    assert ruff.fields["mapping"]["fix_applicability"] == "applicability"
    assert ruff.fields["suppress"] == {
        "comment": "# noqa: {codes}",
        "where": "line",
        "separator": ", ",
    }
    assert "suppress" not in presets["tsc"].fields  # @ts-expect-error takes no codes


def test_a_tool_on_path_or_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gcc: not beside the backend's interpreter, so PATH alone decides."""
    assert not (Path(sys.executable).parent / "gcc").exists()
    fake = executable(tmp_path / "bin" / "gcc")
    monkeypatch.setenv("PATH", str(fake.parent))
    gcc = {p.name: p for p in validation_schema().presets}["gcc"]
    assert gcc.on_path and gcc.found_at == str(fake)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    gcc = {p.name: p for p in validation_schema().presets}["gcc"]
    assert not gcc.on_path and gcc.found_at is None


def test_with_a_resource_the_validations_own_path_counts_from_its_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    root = tmp_path / "project"
    fake = executable(root / "sub" / "node_modules" / ".bin" / "eslint")
    executable(root / "bin" / "gcc")
    declared = parse_config(
        '[[validations]]\npreset = "eslint"\ncwd = "sub"\nenv = { PATH = "node_modules/.bin" }\n'
        '[[validations]]\npreset = "hadolint"\nenv = { PATH = "nowhere" }\n'
    )
    presets = {p.name: p for p in validation_schema(root, declared).presets}
    assert presets["eslint"].on_path and presets["eslint"].found_at == str(fake)
    assert not presets["hadolint"].on_path  # its own PATH replaces the backend's
    # A preset nobody declares: the backend's PATH, relative entries from the root.
    monkeypatch.setenv("PATH", "bin")
    presets = {p.name: p for p in validation_schema(root, declared).presets}
    assert presets["gcc"].found_at == str(root / "bin" / "gcc")
    assert not {p.name: p for p in validation_schema(None, declared).presets}["gcc"].on_path


def test_search_path_is_the_validators() -> None:
    root = Path("/r")
    (config,) = parse_config(
        '[[validations]]\nname = "a"\nmode = "required"\ncommand = ["x"]\ncwd = "c"\n'
        f'env = {{ PATH = "rel{os.pathsep}/abs{os.pathsep}" }}\n'
    )
    assert search_path(root, config).split(os.pathsep) == ["/r/c/rel", "/abs", "/r/c"]
    assert search_path(None, config) == f"rel{os.pathsep}/abs{os.pathsep}"
    backend = search_path(None)
    assert backend.split(os.pathsep)[-1] == str(Path(sys.executable).parent)
