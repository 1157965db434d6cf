"""The contract's JSON Schema, shipped in this package, and validation against it.

``acp-schema.json`` here is ``python -m acp_client.schema``'s output (the same
as ``docs/acp-schema.json``); a test fails when they drift apart.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from acp_client.errors import RemoteError


@cache
def contract() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("acp-schema.json").read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


def problems(instance: object, ref: dict[str, Any]) -> list[str]:
    """Every way ``instance`` breaks the schema ``ref`` (a ``$ref`` into ``$defs``)."""
    schema = {**ref, "$defs": contract()["$defs"]}
    validator = Draft202012Validator(schema)
    return [
        f"{'.'.join(str(p) for p in error.absolute_path) or '(top)'}: {error.message}"
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    ]


def methods() -> dict[str, dict[str, Any]]:
    methods_: dict[str, dict[str, Any]] = contract()["methods"]
    return methods_


def aliases() -> dict[str, str]:
    aliases_: dict[str, str] = contract()["aliases"]
    return aliases_


def event_ref(method: str) -> dict[str, Any] | None:
    event: dict[str, Any] | None = contract()["events"].get(method)
    return None if event is None else event["params"]


def _subclasses(cls: type[RemoteError]) -> list[type[RemoteError]]:
    return [cls, *(sub for child in cls.__subclasses__() for sub in _subclasses(child))]


@cache
def kinds_by_code() -> dict[int, frozenset[str]]:
    """``data.code`` strings allowed with each numeric code (``OUTSIDE_ROOT`` is
    a ``NOT_FOUND``), read from the client's error catalog."""
    table: dict[int, set[str]] = {}
    for cls in _subclasses(RemoteError):
        code = getattr(cls, "code", None)
        if code is not None:
            table.setdefault(int(code), set()).add(str(cls.kind))
    return {code: frozenset(kinds) for code, kinds in table.items()}


def error_problems(error: object, expected_code: int | None = None) -> list[str]:
    """What is wrong with a JSON-RPC error object, against the error catalog."""
    if not isinstance(error, dict):
        return [f"error is not an object: {error!r:.120}"]
    found: list[str] = []
    code, message, data = error.get("code"), error.get("message"), error.get("data")
    if expected_code is not None and code != expected_code:
        expected = "/".join(sorted(kinds_by_code().get(expected_code, {"?"})))
        found.append(f"error code {code!r}, expected {expected_code} ({expected})")
    if not isinstance(message, str) or not message:
        found.append("error.message is missing or empty")
    if not isinstance(data, dict):
        return [*found, "error.data is missing: it must carry data.code"]
    kind = data.get("code")
    allowed = kinds_by_code().get(code) if isinstance(code, int) else None
    if allowed is None:
        found.append(f"error code {code!r} is not in the contract's catalog")
    elif kind not in allowed:
        found.append(f"data.code {kind!r} does not go with code {code} ({'/'.join(allowed)})")
    remedy = data.get("remedy")
    if remedy is not None and (not isinstance(remedy, str) or not remedy):
        found.append(f"data.remedy must be a non-empty string, not {remedy!r:.60}")
    return found
