"""Validation results -> LSP diagnostics: the severity table and the anchor.

Severity comes from the validation's mode and outcome, never from the tool
(ADR-027):

=============  ======  ==========================================
mode           result  LSP severity
=============  ======  ==========================================
required       failed  Error
required       passed  none (clears the validation's diagnostics)
informational  failed  Warning
informational  passed  Hint
=============  ======  ==========================================

A finding without a location, and a result without findings that still has
something to say (a failure, an informational pass), is anchored on the line
that declares the validation in the resource's ``acp.toml`` (``declared_at``);
without that, on the first line of ``acp.toml``.

A broken ``acp.toml`` itself (``validation.list``'s ``config_error``; the
last valid declarations stay in force meanwhile) is one Error where the
backend locates it, with ``acp.toml`` as its source.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from lsprotocol.types import Diagnostic, DiagnosticSeverity, Position, PositionEncodingKind, Range

from acp_client.models import (
    MAX_POSITION,
    Finding,
    Location,
    ValidationMode,
    ValidationResult,
)
from lsp_server.positions import Lines, convert
from lsp_server.roots import DECLARATION_FILE, inside

log = logging.getLogger(__name__)

DECLARATION_TOP = Location(path=DECLARATION_FILE, line=0, character=0)
CONFIG_SOURCE = DECLARATION_FILE
"""The ``source`` of the diagnostic that says the declaration file is broken."""


def severity_for(mode: ValidationMode, passed: bool) -> DiagnosticSeverity | None:
    """The fixed table; ``None`` means "show nothing"."""
    if mode is ValidationMode.REQUIRED:
        return None if passed else DiagnosticSeverity.Error
    return DiagnosticSeverity.Hint if passed else DiagnosticSeverity.Warning


def anchor_of(result: ValidationResult) -> Location:
    return result.declared_at or DECLARATION_TOP


class Mark(NamedTuple):
    """One diagnostic to show, still in contract terms (code points). A
    tuple: a 10,000-finding result makes 10,000 of them at once."""

    result: ValidationResult
    location: Location
    message: str
    severity: DiagnosticSeverity
    code: str | None = None
    anchored: bool = False  # True: shown on the declaration, not where it happened
    finding: int | None = None  # its index in ``result.findings``: the way back to its fixes


class ConfigMark(NamedTuple):
    """The backend's complaint about a resource's ``acp.toml``."""

    location: Location
    message: str
    code: str | None
    anchored: bool  # True: it named no usable place, so it shows on the first line


def config_mark(error: Finding) -> ConfigMark:
    location = error.location
    if location is not None and inside(location.path):
        return ConfigMark(location, error.message, error.code, anchored=False)
    return ConfigMark(DECLARATION_TOP, error.message, error.code, anchored=True)


def marks_for(result: ValidationResult) -> dict[str, list[Mark]]:
    """The result's marks grouped by path (relative to the resource root).

    A finding whose path would leave the resource root is dropped (path
    jail): the backend should never send one, and we never show one.
    """
    severity = severity_for(result.mode, result.passed)
    if severity is None:
        return {}
    grouped: dict[str, list[Mark]] = {}
    for index, finding in enumerate(result.findings):
        mark = _finding_mark(result, finding, severity, index)
        if not inside(mark.location.path):
            log.warning(
                "dropping a %s finding outside its resource: %r",
                result.validation,
                mark.location.path,
            )
            continue
        grouped.setdefault(mark.location.path, []).append(mark)
    if not result.findings:
        text = result.message or (
            f"{result.validation} passed" if result.passed else f"{result.validation} failed"
        )
        anchor = anchor_of(result)
        grouped[anchor.path] = [Mark(result, anchor, text, severity, anchored=True)]
    return grouped


def _finding_mark(
    result: ValidationResult, finding: Finding, severity: DiagnosticSeverity, index: int
) -> Mark:
    if finding.location is not None:
        return Mark(result, finding.location, finding.message, severity, finding.code, False, index)
    anchor = anchor_of(result)
    return Mark(result, anchor, finding.message, severity, finding.code, True, index)


def to_diagnostic(
    mark: Mark, lines: Lines | None, encoding: PositionEncodingKind | str
) -> Diagnostic:
    """The LSP diagnostic for ``mark``, columns converted against ``lines``."""
    result = mark.result
    return Diagnostic(
        range=_range(mark.location, mark.anchored, lines, encoding),
        message=mark.message,
        severity=mark.severity,
        source=result.validation,
        code=mark.code,
        data={
            "result_id": result.id,
            "run_id": result.run_id,
            "plan_id": result.plan_id,
            "resource_id": result.resource_id,
            "validation": result.validation,
            "finding": mark.finding,
        },
    )


def config_diagnostic(
    mark: ConfigMark, lines: Lines | None, encoding: PositionEncodingKind | str
) -> Diagnostic:
    return Diagnostic(
        range=_range(mark.location, mark.anchored, lines, encoding),
        message=mark.message,
        severity=DiagnosticSeverity.Error,
        source=CONFIG_SOURCE,
        code=mark.code,
    )


def _range(
    loc: Location, anchored: bool, lines: Lines | None, encoding: PositionEncodingKind | str
) -> Range:
    end_line = loc.end_line if loc.end_line is not None else loc.line
    if loc.end_character is not None:
        end_character = loc.end_character
    elif anchored and lines is not None and loc.line < len(lines):
        end_character = len(lines[loc.line])  # the whole line it is anchored on
    else:
        end_character = min(loc.character + 1, MAX_POSITION)  # a point: one character wide
    start = Position(loc.line, _clamped(convert(lines, loc.line, loc.character, encoding)))
    end = Position(end_line, _clamped(convert(lines, end_line, end_character, encoding)))
    return Range(start=start, end=max(start, end, key=lambda p: (p.line, p.character)))


def _clamped(column: int) -> int:
    return min(column, MAX_POSITION)
