"""Validation results -> marks: the severity table and the anchor, free of any
LSP framework, so ``acp-lsp check`` shares them with the editor without
loading one (ADR 0015). ``features/diagnostics/mapping.py`` turns marks into
wire diagnostics.

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
from array import array
from collections.abc import Iterable, Iterator, Sequence
from enum import IntEnum
from itertools import compress
from operator import ne, sub
from typing import NamedTuple

from acp_client.models import Finding, Location, ValidationMode, ValidationResult
from acp_client.paths import CONFIG_FILE
from lsp_server.roots import all_inside, inside

log = logging.getLogger(__name__)

DECLARATION_TOP = Location(path=CONFIG_FILE, line=0, character=0)


class Severity(IntEnum):
    """LSP's ``DiagnosticSeverity`` values (equal to lsprotocol's members)."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4


def severity_for(mode: ValidationMode, passed: bool) -> Severity | None:
    """The fixed table; ``None`` means "show nothing"."""
    if mode is ValidationMode.REQUIRED:
        return None if passed else Severity.ERROR
    return Severity.HINT if passed else Severity.WARNING


def anchor_of(result: ValidationResult) -> Location:
    return result.declared_at or DECLARATION_TOP


class Mark(NamedTuple):
    """One diagnostic to show, still in contract terms (code points). A
    tuple: a 10,000-finding result makes 10,000 of them at once."""

    result: ValidationResult
    location: Location
    message: str
    severity: Severity
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


Placed = dict[str, int | Sequence[int | None]]
"""Path (relative to the resource root) -> which of the result's findings
are shown there (``indexes`` reads it). Held for as long as the result is
shown, so compact: when the file's findings are adjacent in the result (a
tool's output mostly is grouped by file), one int holding the first index
and how many (a ``range`` with its int ends held ~8 bytes a finding more);
else an ``array`` of their indexes (a list held a 28-byte int object per
index above 256); ``[None]`` for the result's own message (a result
without findings)."""

_RUN = 1 << 16  # a run of adjacent findings is held as first * _RUN + count


def placed(result: ValidationResult) -> Placed:
    """Where the result's marks go, without building them: the runs of
    adjacent findings in one file (a tool's output mostly is grouped by
    file) found in one pass, each distinct path checked once.

    A finding whose path would leave the resource root is dropped (path
    jail): the backend should never send one, and we never show one.
    """
    if severity_for(result.mode, result.passed) is None:
        return {}
    anchor = anchor_of(result).path
    findings = result.findings
    if not findings:
        return {anchor: [None]}
    paths = [anchor if (location := f.location) is None else location.path for f in findings]
    # Where each run starts, found without a Python step a finding: ten
    # validators over 10,000 files are ten results of 10,000 runs each.
    starts = [0, *compress(range(1, len(paths)), map(ne, paths[1:], paths))]
    counts = list(map(sub, [*starts[1:], len(paths)], starts))
    run_paths = [paths[start] for start in starts]
    if len(set(run_paths)) == len(run_paths) and max(counts) < _RUN and all_inside(run_paths):
        # The usual result: one run a file, all in the root.
        return {
            path: first * _RUN + n for path, first, n in zip(run_paths, starts, counts, strict=True)
        }
    grouped: Placed = {}
    outside: set[str] = set()
    for path, first, n in zip(run_paths, starts, counts, strict=True):
        _take_run(grouped, outside, path, range(first, first + n), result)
    return grouped


def _take_run(
    grouped: Placed, outside: set[str], path: str, run: range, result: ValidationResult
) -> None:
    """Findings ``run`` (adjacent) are in ``path``: held as one int (see
    ``_RUN``), or, for a file met again after others, added to its array."""
    held = grouped.get(path)
    if held is not None:
        if isinstance(held, array):
            held.extend(run)
        else:
            grouped[path] = array("I", [*indexes(held), *run])
    elif path not in outside:
        if inside(path):
            count = len(run)
            grouped[path] = run.start * _RUN + count if count < _RUN else run
        else:
            outside.add(path)
            log.warning("dropping %s findings outside its resource: %r", result.validation, path)


def indexes(held: int | Sequence[int | None]) -> Sequence[int | None]:
    """The indexes of a result's findings in a file, from what ``placed``
    holds for it."""
    if not isinstance(held, int):
        return held
    first, count = divmod(held, _RUN)
    return range(first, first + count)


Held = tuple[ValidationResult, int | Sequence[int | None]]
"""A result shown on a file, and what ``placed`` holds for that file."""

Spot = tuple[ValidationResult, Location, bool, str, str | None, int | None]
"""What one mark shows and where: its result, location, anchored (True: on
the declaration, not where it happened), message, code, and the finding's
index (``None``: the result's own message). A plain tuple: a publish makes
one per finding, and a ``Mark`` costs several times as much to build."""


def spots(held: Iterable[Held]) -> Iterator[Spot]:
    """The spots of a file's findings, from each result shown there: one
    generator a file, not one a result (ten validators over 10,000 files
    are 100,000 results of a file to walk at publish)."""
    for result, shown in held:
        findings = result.findings
        for index in indexes(shown):
            if index is None:
                text = result.message or (
                    f"{result.validation} passed"
                    if result.passed
                    else f"{result.validation} failed"
                )
                yield result, anchor_of(result), True, text, None, None
                continue
            finding = findings[index]
            location = finding.location
            if location is None:
                yield result, anchor_of(result), True, finding.message, finding.code, index
            else:
                yield result, location, False, finding.message, finding.code, index


def mark_at(result: ValidationResult, index: int | None) -> Mark:
    """The mark of finding ``index`` (``None``: the result's own message);
    only for results ``placed`` shows (they have a severity)."""
    severity = severity_for(result.mode, result.passed)
    assert severity is not None
    ((_, location, anchored, message, code, _),) = spots(((result, (index,)),))
    return Mark(result, location, message, severity, code, anchored, index)


def marks_for(result: ValidationResult) -> dict[str, list[Mark]]:
    """The result's marks grouped by path (relative to the resource root)."""
    return {
        path: [mark_at(result, index) for index in indexes(held)]
        for path, held in placed(result).items()
    }
