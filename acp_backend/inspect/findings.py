"""Findings here: the latest results' findings that cover a position.

Coverage is ``Location.covers`` (shared with the language server, which
filters a cached line by it). Findings with no location count where the
editor shows them: on the line that declares their validation in ``acp.toml``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set

from acp_client.models import (
    ContextFinding,
    Finding,
    ValidationMode,
    ValidationResult,
    ValidationSpec,
)
from acp_client.paths import CONFIG_FILE


def _anchored_here(result: ValidationResult, path: str, line: int) -> bool:
    anchor = result.declared_at
    return path == CONFIG_FILE and anchor is not None and anchor.line == line


def _located_here(
    result: ValidationResult, path: str, line: int, character: int | None
) -> list[Finding]:
    here = [
        finding
        for finding in result.findings
        if finding.location is not None
        and finding.location.path == path
        and finding.location.covers(line, character)
    ]
    if _anchored_here(result, path, line):
        here += [finding for finding in result.findings if finding.location is None]
        if not result.findings and not result.passed:
            here.append(Finding(message=result.message or f"{result.validation} failed"))
    return here


def findings_at(
    results: Iterable[ValidationResult],
    specs: Mapping[str, ValidationSpec],
    path: str,
    line: int,
    character: int | None,
    *,
    current_sha256: str | Set[str] | None,
) -> list[ContextFinding]:
    """The findings of ``results`` at ``(path, line, character)``: required
    validations first, then by name and place. ``current_sha256`` (the
    digest, or every digest, of the text looked at: ``Source.digests``)
    tells a stale finding from a fresh one."""
    current = {current_sha256} if isinstance(current_sha256, str) else current_sha256 or set()
    found: list[ContextFinding] = []
    for result in results:
        spec = specs.get(result.validation)
        recorded = result.file_hashes.get(path)
        stale = recorded is not None and bool(current) and recorded not in current
        found += [
            ContextFinding(
                validation=result.validation,
                mode=result.mode,
                description=spec.description if spec else "",
                passed=result.passed,
                finding=finding,
                result_id=result.id,
                run_id=result.run_id,
                found_at=result.finished_at,
                stale=stale,
            )
            for finding in _located_here(result, path, line, character)
        ]
    return sorted(found, key=_order)


def _order(item: ContextFinding) -> tuple[bool, str, int, int]:
    location = item.finding.location
    where = (location.line, location.character) if location else (-1, -1)
    return (item.mode is not ValidationMode.REQUIRED, item.validation, *where)
