"""Marks (``lsp_server.marks``) -> LSP diagnostics, as JSON text.

One converter for every feature that shows or reads diagnostics (the
diagnostics themselves, the code actions on them): a diagnostic is written
as the JSON text the editor receives, and a push joins those texts as they
are (no lsprotocol object, no cattrs pass: a 370-finding save spent most of
its publish there; ADR 0015). No
nested dicts for ``json.dumps`` either: the part a result's diagnostics
share is written once per result, and a diagnostic costs its two columns
and the escaping of its message and code, with the very function
``json.dumps`` uses for a string (the text is the same, byte for byte).
Where pygls needs objects (pull reports, code actions), ``as_objects``
parses and structures the same text.

The hot path takes a file's held results and finding indexes
(``ResultStore.held``), not ``Mark`` objects: a 10,000-finding burst
built one per finding for nothing.

A finding's related places (SARIF ``relatedLocations``, extra locations,
code flow steps) and its rule's documentation go out only to clients that
take them (``Links``); a finding with neither costs one check, a client
taking neither not even that.
"""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _string
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from lsprotocol.converters import get_converter
from lsprotocol.types import Diagnostic, PositionEncodingKind

from acp_client.models import MAX_POSITION, Finding, Location, RelatedLocation, ValidationResult
from acp_client.paths import CONFIG_FILE
from lsp_server.drift import LineMap
from lsp_server.marks import ConfigMark, Held, Severity, severity_for, spots
from lsp_server.positions import Lines, column, columns, line_at

if TYPE_CHECKING:
    from lsp_server.documents import Document

CONFIG_SOURCE = CONFIG_FILE
"""The ``source`` of the diagnostic that says the declaration file is broken."""

_converter = get_converter()

Place = Callable[[str], tuple[str, Lines] | None]
"""A path of the finding's resource -> the URI the editor knows the file by
and its text; None: not a file to point at (outside the root, not there)."""


@dataclass(frozen=True, slots=True)
class Links:
    """What a client takes beyond a diagnostic's own range."""

    place: Place | None  # None: no ``relatedInformation``
    code_description: bool


def shown_diagnostics(
    held: Iterable[Held],
    document: Document | None,
    path: str,
    lines: Lines | None,
    encoding: PositionEncodingKind | str,
    *,
    links: Links | None = None,
    config_error: ConfigMark | None = None,
) -> list[str]:
    """What the editor shows of one file: its findings, against the text it
    has, and its ``acp.toml`` error if this is the file. A result computed on
    the file as last saved, before unsaved edits, shows its findings where
    their lines went (``lsp_server.drift``), and not those on lines that
    changed; one computed on other text is held back until its validation
    reports again: placed on the new text it would be wrong."""
    moved: dict[str, LineMap] = {}
    if document is not None:
        kept = []
        for result, where in held:
            reading = document.reading(result, path)
            if reading.known:
                kept.append((result, where))
                if reading.moved is not None:
                    moved[result.id] = reading.moved
        held = kept
    shown = file_diagnostics(held, lines, encoding, links, moved)
    if config_error is not None:
        shown.append(config_diagnostic(config_error, lines, encoding))
    return shown


def file_diagnostics(
    held: Iterable[Held],
    lines: Lines | None,
    encoding: PositionEncodingKind | str,
    links: Links | None = None,
    moved: Mapping[str, LineMap] | None = None,
) -> list[str]:
    """The diagnostics of one file, from each result shown there (as
    ``ResultStore.held`` gives them), in one pass; a result in ``moved``
    (by id) has its lines moved, and its findings on changed lines left out."""
    shown = []
    last = head = data = move = None
    findings: Sequence[Finding] = ()
    for result, spot, anchored, message, code, index in spots(held):
        if result is not last:
            last, findings = result, result.findings
            head, data = _SHARED.get(result.id) or _shared(result)
            move = moved.get(result.id) if moved else None
        shift: int | None = 0 if move is None else move.shift(spot)
        if shift is None:
            continue
        more = "" if code is None else f', "code": {_string(code)}'
        if links is not None and index is not None:
            more += _link(findings[index], links, encoding)
        shown.append(
            f'{{"range": {_range(spot, anchored, lines, encoding, shift)}{head}'
            f"{_string(message)}{data}{'null' if index is None else index}}}{more}}}"
        )
    return shown


_SHARED: dict[str, tuple[str, str]] = {}
"""``_shared`` by result id (a result never changes): looked up once per
file and result, which for ten validators over 10,000 files is 100,000
times."""
_SHARED_MAX = 256


def _shared(result: ValidationResult) -> tuple[str, str]:
    """What every diagnostic of a result has, as text: what goes between its
    range and its message, and its ``data`` up to the finding's index. Once
    per result, not per file: a burst sends a result's findings to 1,000s
    of files."""
    severity = severity_for(result.mode, result.passed)
    assert severity is not None  # placed: only results that show something
    data = {
        "result_id": result.id,
        "run_id": result.run_id,
        "plan_id": result.plan_id,
        "resource_id": result.resource_id,
        "validation": result.validation,
        "finding": None,
    }
    shared = _head(severity, result.validation), f', "data": {json.dumps(data)[: -len("null}")]}'
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    _SHARED[result.id] = shared
    return shared


def _head(severity: Severity, source: str) -> str:
    """A diagnostic's text between its range and its message."""
    return f', "severity": {int(severity)}, "source": {_string(source)}, "message": '


def _link(finding: Finding, links: Links, encoding: PositionEncodingKind | str) -> str:
    text = ""
    if links.code_description and finding.help_uri and _is_web_link(finding.help_uri):
        text += f', "codeDescription": {{"href": {_string(finding.help_uri)}}}'
    if links.place is not None and finding.related:
        related = [_related(r, links.place, encoding) for r in finding.related]
        shown = [item for item in related if item is not None]
        if shown:
            text += f', "relatedInformation": [{", ".join(shown)}]'
    return text


def _related(
    related: RelatedLocation, place: Place, encoding: PositionEncodingKind | str
) -> str | None:
    found = place(related.location.path)
    if found is None:
        return None
    uri, lines = found
    return (
        f'{{"location": {{"uri": {_string(uri)}, '
        f'"range": {_range(related.location, False, lines, encoding)}}}, '
        f'"message": {_string(related.message)}}}'
    )


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
) -> str:
    text = (
        f'{{"range": {_range(mark.location, mark.anchored, lines, encoding)}'
        f"{_head(Severity.ERROR, CONFIG_SOURCE)}{_string(mark.message)}"
    )
    if mark.code is not None:
        text += f', "code": {_string(mark.code)}'
    return text + "}"


def as_objects(texts: Iterable[str]) -> list[Diagnostic]:
    """The lsprotocol diagnostics for diagnostics' JSON, for the paths pygls
    serialises (parsed as one list: ``json.loads`` a diagnostic took nearly
    twice as long)."""
    wires = json.loads(f"[{', '.join(texts)}]")
    return [_converter.structure(wire, Diagnostic) for wire in wires]


def _range(
    loc: Location,
    anchored: bool,
    lines: Lines | None,
    encoding: PositionEncodingKind | str,
    shift: int = 0,
) -> str:
    """``loc`` on ``lines``, ``shift`` lines down from where it was read
    (``LineMap.shift``: a moved finding, without a moved ``Location`` each)."""
    line, character = loc.line + shift, loc.character
    text = line_at(lines, line)
    end_line = line if loc.end_line is None else loc.end_line + shift
    end_character = loc.end_character
    if end_character is None:
        if anchored and text is not None:
            end_character = len(text)  # the whole line it is anchored on
        else:
            end_character = min(character + 1, MAX_POSITION)  # a point: one character wide
    if end_line == line:  # nearly every range: both ends on one line's text
        start, end = (
            (character, end_character)
            if text is None
            else columns(text, character, end_character, encoding)
        )
    else:
        start = character if text is None else column(text, character, encoding)
        end_text = line_at(lines, end_line)
        end = end_character if end_text is None else column(end_text, end_character, encoding)
    start = min(start, MAX_POSITION)  # a position the contract took is within it already
    if end_line < line or (end_line == line and end < start):
        end_line, end = line, start
    return (
        f'{{"start": {{"line": {line}, "character": {start}}}, '
        f'"end": {{"line": {end_line}, "character": {min(end, MAX_POSITION)}}}}}'
    )
