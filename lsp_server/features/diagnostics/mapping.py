"""Marks (``lsp_server.marks``) -> LSP diagnostics, as wire dicts.

One converter: the diagnostic is built as the JSON the editor receives, and
a push sends it as is (no lsprotocol object, no cattrs pass: a 370-finding
save spent most of its publish there; ADR 0015). Where pygls needs objects
(pull reports, code actions), ``as_objects`` structures the same dicts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lsprotocol.converters import get_converter
from lsprotocol.types import Diagnostic, PositionEncodingKind

from acp_client.models import MAX_POSITION, Location
from lsp_server.marks import ConfigMark, Mark, Severity
from lsp_server.positions import Lines, convert
from lsp_server.roots import DECLARATION_FILE

CONFIG_SOURCE = DECLARATION_FILE
"""The ``source`` of the diagnostic that says the declaration file is broken."""

Wire = dict[str, Any]
"""A JSON-ready LSP structure, keys as on the wire (camelCase, no nulls)."""

_converter = get_converter()


def to_diagnostic(mark: Mark, lines: Lines | None, encoding: PositionEncodingKind | str) -> Wire:
    """The LSP diagnostic for ``mark``, columns converted against ``lines``."""
    result = mark.result
    wire: Wire = {
        "range": _range(mark.location, mark.anchored, lines, encoding),
        "severity": int(mark.severity),
        "source": result.validation,
        "message": mark.message,
        "data": {
            "result_id": result.id,
            "run_id": result.run_id,
            "plan_id": result.plan_id,
            "resource_id": result.resource_id,
            "validation": result.validation,
            "finding": mark.finding,
        },
    }
    if mark.code is not None:
        wire["code"] = mark.code
    return wire


def config_diagnostic(
    mark: ConfigMark, lines: Lines | None, encoding: PositionEncodingKind | str
) -> Wire:
    wire: Wire = {
        "range": _range(mark.location, mark.anchored, lines, encoding),
        "severity": int(Severity.ERROR),
        "source": CONFIG_SOURCE,
        "message": mark.message,
    }
    if mark.code is not None:
        wire["code"] = mark.code
    return wire


def as_objects(wires: Iterable[Wire]) -> list[Diagnostic]:
    """The lsprotocol diagnostics for wire dicts, for the paths pygls serialises."""
    return [_converter.structure(wire, Diagnostic) for wire in wires]


def _range(
    loc: Location, anchored: bool, lines: Lines | None, encoding: PositionEncodingKind | str
) -> Wire:
    end_line = loc.end_line if loc.end_line is not None else loc.line
    if loc.end_character is not None:
        end_character = loc.end_character
    elif anchored and lines is not None and loc.line < len(lines):
        end_character = len(lines[loc.line])  # the whole line it is anchored on
    else:
        end_character = min(loc.character + 1, MAX_POSITION)  # a point: one character wide
    start = (loc.line, _clamped(convert(lines, loc.line, loc.character, encoding)))
    end = max(start, (end_line, _clamped(convert(lines, end_line, end_character, encoding))))
    return {
        "start": {"line": start[0], "character": start[1]},
        "end": {"line": end[0], "character": end[1]},
    }


def _clamped(column: int) -> int:
    return min(column, MAX_POSITION)
