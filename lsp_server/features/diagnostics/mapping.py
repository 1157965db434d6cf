"""Marks (``lsp_server.marks``) -> LSP diagnostics, as wire dicts.

One converter: the diagnostic is built as the JSON the editor receives, and
a push sends it as is (no lsprotocol object, no cattrs pass: a 370-finding
save spent most of its publish there; ADR 0015). Where pygls needs objects
(pull reports, code actions), ``as_objects`` structures the same dicts.

A finding's related places (SARIF ``relatedLocations``, extra locations,
code flow steps) and its rule's documentation go out only to clients that
take them (``Links``); a finding with neither costs one check, a client
taking neither not even that.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from lsprotocol.converters import get_converter
from lsprotocol.types import Diagnostic, PositionEncodingKind

from acp_client.models import MAX_POSITION, Finding, Location, RelatedLocation
from lsp_server.marks import ConfigMark, Mark, Severity
from lsp_server.positions import Lines, convert
from lsp_server.roots import DECLARATION_FILE

CONFIG_SOURCE = DECLARATION_FILE
"""The ``source`` of the diagnostic that says the declaration file is broken."""

Wire = dict[str, Any]
"""A JSON-ready LSP structure, keys as on the wire (camelCase, no nulls)."""

_converter = get_converter()

Place = Callable[[str], tuple[str, Lines] | None]
"""A path of the finding's resource -> the URI the editor knows the file by
and its text; None: not a file to point at (outside the root, not there)."""


@dataclass(frozen=True, slots=True)
class Links:
    """What a client takes beyond a diagnostic's own range."""

    place: Place | None  # None: no ``relatedInformation``
    code_description: bool


def to_diagnostic(
    mark: Mark,
    lines: Lines | None,
    encoding: PositionEncodingKind | str,
    links: Links | None = None,
) -> Wire:
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
    if links is not None and mark.finding is not None:
        _link(wire, result.findings[mark.finding], links, encoding)
    return wire


def _link(wire: Wire, finding: Finding, links: Links, encoding: PositionEncodingKind | str) -> None:
    if links.code_description and finding.help_uri and _is_web_link(finding.help_uri):
        wire["codeDescription"] = {"href": finding.help_uri}
    if links.place is not None and finding.related:
        related = [_related(r, links.place, encoding) for r in finding.related]
        shown = [item for item in related if item is not None]
        if shown:
            wire["relatedInformation"] = shown


def _related(
    related: RelatedLocation, place: Place, encoding: PositionEncodingKind | str
) -> Wire | None:
    found = place(related.location.path)
    if found is None:
        return None
    uri, lines = found
    return {
        "location": {"uri": uri, "range": _range(related.location, False, lines, encoding)},
        "message": related.message,
    }


_URI_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")


@functools.lru_cache(maxsize=1024)
def _is_web_link(uri: str) -> bool:
    """An absolute http(s) URI with a host, in URI characters only (RFC 3986):
    what an editor can open as the rule's documentation. Few distinct links
    (one per rule) stand behind thousands of findings, hence the cache."""
    if not uri or not _URI_CHARACTERS.issuperset(uri):
        return False
    try:
        parts = urlsplit(uri)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return False


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
