"""The committed JSON Schema is exactly what the models generate."""

from __future__ import annotations

import json
import re
from pathlib import Path

from acp_client.events import EVENT_TYPES
from acp_client.operations import ALIASES, OPERATIONS
from acp_client.schema import build_schema, render

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "acp-schema.json"
PROTOCOL_DOC = SCHEMA_FILE.parent / "acp-protocol.md"


def test_committed_schema_matches_the_models() -> None:
    committed = SCHEMA_FILE.read_text(encoding="utf-8")
    assert committed == render(), (
        "docs/acp-schema.json is stale: run "
        "`python -m acp_client.schema > docs/acp-schema.json` and commit it"
    )


def test_schema_covers_every_operation_and_event() -> None:
    schema = build_schema()
    assert set(schema["methods"]) == set(OPERATIONS)
    assert set(schema["events"]) == set(EVENT_TYPES)
    # Every $ref points at a definition that exists.
    text = json.dumps(schema)
    for name in {part.split('"')[0] for part in text.split("#/$defs/")[1:]}:
        assert name in schema["$defs"], name


def test_protocol_document_names_every_operation_and_event() -> None:
    doc = PROTOCOL_DOC.read_text(encoding="utf-8")
    missing = [name for name in [*OPERATIONS, *EVENT_TYPES] if f"`{name}`" not in doc]
    assert missing == []


def test_protocol_document_alias_table_matches_the_code() -> None:
    row = re.compile(r"^\| `(_cleveragents/[^`]+)` \| `([^`]+)` \|$", re.M)
    rows = row.findall(PROTOCOL_DOC.read_text(encoding="utf-8"))
    assert dict(rows) == ALIASES
