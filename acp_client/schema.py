"""The ACP contract as JSON Schema, generated from the models.

``docs/acp-schema.json`` is this module's output, committed; a test fails
when the two drift apart. Regenerate with
``python -m acp_client.schema > docs/acp-schema.json``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from acp_client.errors import ErrorCode, ErrorKind
from acp_client.events import EVENT_TYPES
from acp_client.operations import ALIASES, OPERATIONS, PROTOCOL_VERSION


def build_schema() -> dict[str, Any]:
    inputs: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for op in OPERATIONS.values():
        inputs += [(op.params, "validation"), (op.result, "serialization")]
    inputs += [(cls, "serialization") for cls in EVENT_TYPES.values()]
    refs, definitions = models_json_schema(inputs, ref_template="#/$defs/{model}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ACP (CleverAgents Agent Client Protocol) as implemented by acp-lsp",
        "protocol_version": PROTOCOL_VERSION,
        "methods": {
            op.method: {
                "summary": op.summary,
                "mutates": op.mutates,
                "params": refs[(op.params, "validation")],
                "result": refs[(op.result, "serialization")],
            }
            for op in OPERATIONS.values()
        },
        "events": {
            method: {"params": refs[(cls, "serialization")]} for method, cls in EVENT_TYPES.items()
        },
        "aliases": dict(sorted(ALIASES.items())),
        "errors": {
            "codes": {code.name: int(code) for code in ErrorCode},
            "kinds": [str(kind) for kind in ErrorKind],
        },
        "$defs": definitions["$defs"],
    }


def render() -> str:
    return json.dumps(build_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
