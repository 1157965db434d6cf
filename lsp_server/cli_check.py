"""``acp-lsp check``: the editor's diagnostics, headless, for CI and the terminal.

Same resolution (``resource.resolve``) and the same mapping (severity table,
declaration anchor) as the language server. Exit status: 0 when no required
validation failed, 1 when one did, 2 when the backend could not be reached,
a PATH is not in a registered resource, or the run did not finish in time.

It changes nothing unless told: ``--register`` registers each PATH that is
a directory outside every resource; ``--fix`` applies the fixes the tools
attached to their findings and call safe (``--unsafe-fixes``: the unsafe
ones too), through the same plan path as the editor
(``plan.create`` from the findings, ``plan.preview``, ``plan.apply`` with
the previewed hash), then runs the validations again and reports what is
left.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acp_client.client import AcpClient
from acp_client.errors import AcpError, NotFound, TransportError
from acp_client.events import StreamReset, ValidationResultEvent
from acp_client.models import (
    Resource,
    ResultOutcome,
    ValidationMode,
    ValidationResult,
)
from acp_client.paths import is_within, path_to_uri, real_path
from acp_client.signals import Terminated, run_until_terminated
from lsp_server import __version__
from lsp_server.backend import BackendAddress
from lsp_server.check_fix import apply_fixes
from lsp_server.marks import Mark, Severity, marks_for
from lsp_server.options import check_parser

OK, FAILED, UNUSABLE = 0, 1, 2
SEVERITY_WORDS = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "info",
    Severity.HINT: "hint",
}
SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


class Unusable(Exception):
    """Exit 2 with this message."""


@dataclass(frozen=True)
class Given:
    text: str  # as typed
    path: str  # real path
    is_dir: bool
    is_file: bool


@dataclass
class Scope:
    """What the user asked about inside one resource."""

    resource: Resource
    paths: list[str] = field(default_factory=list)  # absolute real paths given
    files: list[str] = field(default_factory=list)  # logical paths of files given

    def covers(self, absolute: str) -> bool:
        return any(is_within(absolute, path) for path in self.paths)


@dataclass(frozen=True)
class Line:
    path: str  # absolute
    mark: Mark

    @property
    def severity(self) -> str:
        return SEVERITY_WORDS[self.mark.severity]


FIX_PASSES = 10
"""``--fix`` applies the fixes, runs the validations again, and repeats
while fixes remain, at most this often (ruff stops at 100; real code
settles in two or three)."""


def tell(message: str) -> None:
    """A line for the human on stderr; stdout carries only the report."""
    sys.stderr.write(f"acp-lsp check: {message}\n")


class OneLine(logging.Formatter):
    """Log records as single lines: an in-process backend's failure (a full
    disk, say) is worth a line to the human, its traceback is not."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"acp-lsp check: {record.levelname.lower()}: {record.getMessage()}"
        error = record.exc_info[1] if record.exc_info else None
        return f"{text}: {error}" if error is not None else text


def main(argv: Sequence[str] | None = None) -> int:
    options = check_parser()
    args = options.parse_args(argv)
    if args.unsafe_fixes and not args.fix:
        options.error("--unsafe-fixes applies with --fix only")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    try:
        return run_until_terminated(check(args, inspect_paths(args.paths)))
    except Unusable as exc:
        tell(str(exc))
    except Terminated as exc:  # an in-process backend has ended its validators
        tell(str(exc))
        return exc.status
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # the last line of defence: one line, never a traceback
        tell(f"unexpected {type(exc).__name__}: {exc}")
    return UNUSABLE


def inspect_paths(texts: Sequence[str]) -> list[Given]:
    given = []
    for text in texts:
        path = real_path(text)
        if not os.path.exists(path):
            raise Unusable(f"{text}: no such file or directory")
        given.append(Given(text, path, os.path.isdir(path), os.path.isfile(path)))
    return given


async def check(args: argparse.Namespace, given: Sequence[Given]) -> int:
    try:
        client = await BackendAddress.from_args(args).connect()
    except TransportError as exc:
        raise Unusable(f"the ACP backend could not be reached: {exc}") from None
    except AcpError as exc:  # e.g. a damaged or unwritable store in local mode
        raise Unusable(f"the ACP backend could not start: {exc}") from None
    started: list[str] = []
    try:
        await client.initialize("acp-lsp check", __version__)
        scopes = await scopes_for(client, given, args.register)
        results: list[ValidationResult] = []
        async with asyncio.timeout(args.timeout):
            for scope in scopes.values():
                if args.no_run:
                    found = await client.latest_results(scope.resource.id)
                else:
                    found = await run_and_wait(client, scope, started)
                for _ in range(FIX_PASSES if args.fix else 0):
                    # As ruff's --fix: fixes skipped for meeting one taken
                    # are applied on the next pass, on the text it left.
                    fixed = await apply_fixes(
                        client, scope.resource, found, scope.covers, unsafe=args.unsafe_fixes
                    )
                    if fixed is None:
                        break
                    tell(f"applied plan {fixed.id}: {', '.join(fixed.paths)}")
                    found = await client.latest_results(scope.resource.id)  # what the fixes left
                results.extend(found)
    except TimeoutError:
        await cancel_quietly(client, started)
        raise Unusable(f"the validations did not finish within {args.timeout:g} s") from None
    except TransportError as exc:
        raise Unusable(f"the ACP backend could not be reached: {exc}") from None
    except AcpError as exc:
        raise Unusable(str(exc)) from None
    finally:
        await close_quietly(client)
    unrecorded = [r for r in results if r.outcome is ResultOutcome.UNRECORDED]
    if unrecorded:  # the backend's store failed: nothing it reports can be trusted
        first = unrecorded[0]
        raise Unusable(
            f"the backend could not store the result of {first.validation}: "
            f"{first.message.removeprefix('its result could not be stored: ')}"
        )
    lines, failed = collect(results, scopes)
    sys.stdout.write(render(lines, args.format))
    summarise(lines, failed, results)
    return FAILED if failed else OK


async def cancel_quietly(client: AcpClient, run_ids: Sequence[str]) -> None:
    """Best effort on the way out: the timeout is what gets reported."""
    for run_id in run_ids:
        try:
            await client.validation_cancel(run_id)
        except AcpError as exc:
            tell(f"could not cancel run {run_id}: {exc}")


async def close_quietly(client: AcpClient) -> None:
    try:
        await client.aclose()
    except AcpError as exc:
        tell(f"closing the ACP backend failed: {exc}")


async def scopes_for(
    client: AcpClient,
    given: Sequence[Given],
    register: bool,
) -> dict[str, Scope]:
    """Each PATH's resource, through ``resource.resolve`` like the editor's."""
    scopes: dict[str, Scope] = {}
    for item in given:
        text, path = item.text, item.path
        try:
            answer = await client.resource_resolve(path)
        except NotFound:
            if not (register and item.is_dir):
                raise Unusable(
                    f"{text} is not in a registered resource; register it with "
                    f"`acp-backend resource add {text}` or rerun with --register"
                ) from None
            await client.resource_register(path)
            tell(f"registered {path}")
            answer = await client.resource_resolve(path)
        scope = scopes.setdefault(answer.resource.id, Scope(answer.resource))
        scope.paths.append(path)
        if item.is_file:
            scope.files.append(answer.logical_path)
    return scopes


async def run_and_wait(
    client: AcpClient, scope: Scope, started: list[str]
) -> list[ValidationResult]:
    """Start a run and follow the event stream (from just before it started)
    until each of its validations has a result: ours, or a newer run's that
    superseded it. Nothing is listed while waiting (ADR 0015)."""
    resource_id = scope.resource.id
    head = await client.last_event_id() or 0
    only_files = tuple(scope.files) if len(scope.files) == len(scope.paths) else None
    run = await client.validation_run(resource_id, paths=only_files)
    started.append(run.run_id)
    wanted = set(run.validations)
    settled: dict[str, ValidationResult] = {}
    if wanted:
        async for event in client.events(head):
            if isinstance(event, StreamReset):  # results may have been missed: list ours
                found = [
                    r for r in await client.latest_results(resource_id) if r.run_id == run.run_id
                ]
            elif isinstance(event, ValidationResultEvent):
                found = [event.result]
            else:
                continue
            for result in found:
                if result.validation in wanted and _settles(result, resource_id, run.run_id):
                    settled[result.validation] = result
            if len(settled) == len(wanted):
                break
    return [settled[name] for name in run.validations]


def _settles(result: ValidationResult, resource_id: str, run_id: str) -> bool:
    if result.resource_id != resource_id or result.plan_id is not None:
        return False
    return result.run_id == run_id or result.outcome is not ResultOutcome.CANCELLED


def collect(
    results: Sequence[ValidationResult], scopes: dict[str, Scope]
) -> tuple[list[Line], list[str]]:
    """Lines in scope, and the required validations that failed in scope."""
    lines: list[Line] = []
    failed: list[str] = []
    for result in results:
        scope = scopes[result.resource_id]
        in_scope = [
            Line(os.path.join(scope.resource.root, mark.location.path), mark)
            for marks in marks_for(result).values()
            for mark in marks
        ]
        in_scope = [line for line in in_scope if line.mark.anchored or scope.covers(line.path)]
        lines.extend(in_scope)
        if result.mode is ValidationMode.REQUIRED and not result.passed and in_scope:
            failed.append(result.validation)
    lines.sort(key=lambda x: (x.path, x.mark.location.line, x.mark.location.character))
    return lines, failed


def shown_path(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def render(lines: Sequence[Line], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([as_json(line) for line in lines], indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(as_sarif(lines), indent=2) + "\n"
    return "".join(
        f"{shown_path(line.path)}:{line.mark.location.line + 1}:"
        f"{line.mark.location.character + 1}: {line.severity}: {line.mark.message} "
        f"[{line.mark.result.validation}]\n"
        for line in lines
    )


def as_json(line: Line) -> dict[str, Any]:
    loc = line.mark.location
    result = line.mark.result
    return {
        "path": line.path,
        "line": loc.line + 1,
        "column": loc.character + 1,
        "end_line": None if loc.end_line is None else loc.end_line + 1,
        "end_column": None if loc.end_character is None else loc.end_character + 1,
        "severity": line.severity,
        "message": line.mark.message,
        "code": line.mark.code,
        "validation": result.validation,
        "mode": str(result.mode),
        "result_id": result.id,
        "run_id": result.run_id,
    }


def as_sarif(lines: Sequence[Line]) -> dict[str, Any]:
    results = []
    for line in lines:
        loc = line.mark.location
        region: dict[str, int] = {"startLine": loc.line + 1, "startColumn": loc.character + 1}
        if loc.end_line is not None:
            region["endLine"] = loc.end_line + 1
        if loc.end_character is not None:
            region["endColumn"] = loc.end_character + 1
        results.append(
            {
                "ruleId": line.mark.code or line.mark.result.validation,
                "level": SARIF_LEVELS[line.severity],
                "message": {"text": f"{line.mark.message} [{line.mark.result.validation}]"},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": path_to_uri(line.path)},
                            "region": region,
                        }
                    }
                ],
            }
        )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "acp-lsp", "version": __version__}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def summarise(lines: Sequence[Line], failed: Sequence[str], results: Sequence[Any]) -> None:
    counts = {
        word: sum(1 for line in lines if line.severity == word) for word in ("error", "warning")
    }
    verdict = (
        f"required failed: {', '.join(sorted(set(failed)))}"
        if failed
        else "no required validation failed"
    )
    tell(
        f"{len(results)} validation(s), {counts['error']} error(s), "
        f"{counts['warning']} warning(s); {verdict}"
    )
