"""``acp-backend validation list|run`` and ``acp-backend results``, through ACP.

Human output numbers lines and columns from 1 (``path:line:col``), as
editors and compilers do; ``--json`` prints the contract's own shapes.
"""

from __future__ import annotations

import argparse
import json
import shutil
from typing import Any

from acp_backend.cli_support import Output, Subcommands, client_command, file_path, format_table
from acp_backend.validation.presets import PRESETS, preset_names
from acp_backend.validation.runner import validator_environment
from acp_client import AcpClient
from acp_client.errors import StreamDropped
from acp_client.events import StreamReset, ValidationCompleted, ValidationResultEvent
from acp_client.models import (
    Finding,
    ResultOutcome,
    ValidationMode,
    ValidationResult,
    ValidationSummary,
)
from acp_client.operations import ValidationListResultsResult, ValidationRunResult
from acp_client.paths import CONFIG_FILE
from acp_client.transport.inprocess import InProcessTransport

FAILED_STATUS = 1


def register(subcommands: Subcommands) -> None:
    validation = subcommands.add_parser("validation", help="list and run a resource's validations")
    actions = validation.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser(
        "list", help=f"the validations a resource declares ({CONFIG_FILE})"
    )
    listing.add_argument("resource", help="the resource's name or id")
    listing.add_argument("--json", action="store_true", help="print the ACP result as JSON")
    listing.set_defaults(run=client_command(_list))

    presets = actions.add_parser(
        "presets",
        help=f"the tools {CONFIG_FILE} can name with preset = ..., and what each expands to",
    )
    presets.add_argument("name", nargs="?", help="show one preset's fields in full")
    presets.add_argument("--json", action="store_true", help="print the presets as JSON")
    presets.set_defaults(run=_presets)

    run = actions.add_parser("run", help="run a resource's validations")
    run.add_argument("resource", help="the resource's name or id")
    run.add_argument(
        "--only", nargs="+", metavar="NAME", help="run only these validations (default: all)"
    )
    run.add_argument(
        "--path",
        nargs="+",
        type=file_path,
        metavar="P",
        help="files that changed: run only the validations whose applies_to matches one",
    )
    run.add_argument(
        "--wait",
        action="store_true",
        help="wait for the results; exit status 1 if a required validation failed",
    )
    run.add_argument("--json", action="store_true", help="print the results as ACP JSON")
    run.set_defaults(run=client_command(_run))

    results = subcommands.add_parser("results", help="a resource's latest validation results")
    results.add_argument("resource", help="the resource's name or id")
    results.add_argument("--history", action="store_true", help="every result, not just the latest")
    results.add_argument("--json", action="store_true", help="print the ACP result as JSON")
    results.set_defaults(run=client_command(_results))


async def _list(client: AcpClient, args: argparse.Namespace) -> str:
    listed = await client.validation_list(args.resource)
    if args.json:
        return _json(listed.model_dump(mode="json"))
    lines = [f"warning: {listed.config_error.message}"] if listed.config_error else []
    if not listed.validations:
        return "\n".join([*lines, f"{args.resource} declares no validations (see {CONFIG_FILE})"])
    rows = [
        [v.name, str(v.mode), " ".join(v.applies_to) or "*", v.description]
        for v in listed.validations
    ]
    return "\n".join([*lines, format_table(["NAME", "MODE", "APPLIES TO", "DESCRIPTION"], rows)])


def _presets(args: argparse.Namespace) -> str | Output:
    chosen = [PRESETS[args.name]] if args.name in PRESETS else list(PRESETS.values())
    if args.name is not None and args.name not in PRESETS:
        return Output(f"no preset {args.name!r}; known: {preset_names()}", 2)
    if args.json:
        return _json({p.name: {"install": p.install, **p.fields} for p in chosen})
    if args.name is None:
        search = validator_environment().get("PATH")
        rows = [
            [p.name, "yes" if shutil.which(p.executable, path=search) else "no", p.summary]
            for p in chosen
        ]
        usage = (
            f"In {CONFIG_FILE}: [[validations]] with preset = NAME (mode required unless "
            "given); its own fields override the preset's."
        )
        return "\n".join([format_table(["PRESET", "INSTALLED", "WHAT"], rows), "", usage])
    (preset,) = chosen
    lines = [f"# {preset.summary}", f"# needs {preset.executable}: {preset.install}"]
    lines += ["[[validations]]", f'preset = "{preset.name}"']
    lines += [f"# {key} = {_toml(value)}" for key, value in preset.fields.items()]
    return "\n".join(lines)


async def _run(client: AcpClient, args: argparse.Namespace) -> str | Output:
    started = await client.validation_run(
        args.resource,
        validations=tuple(args.only) if args.only else None,
        paths=tuple(args.path) if args.path else None,
    )
    # An in-process backend lives only as long as this command: wait, or the
    # run would be cancelled on exit.
    if not args.wait and not isinstance(client.transport, InProcessTransport):
        if args.json:
            return _json(started.model_dump(mode="json"))
        return f"started run {started.run_id}: {', '.join(started.validations) or 'nothing to run'}"
    results, summary = await wait_for_run(client, started, args.resource)
    if args.json:
        text = _json(
            {
                "run": started.model_dump(mode="json"),
                "results": [result.model_dump(mode="json") for result in results],
                "summary": summary.model_dump(mode="json"),
            }
        )
    else:
        text = "\n".join([*map(format_result, results), _summary_line(started.run_id, summary)])
    # The summary is the backend's count of outcomes, whatever reached us.
    failed = summary.required_failed > 0 or any(map(_required_failure, results))
    return Output(text, FAILED_STATUS if failed else 0)


async def wait_for_run(
    client: AcpClient, started: ValidationRunResult, resource: str
) -> tuple[list[ValidationResult], ValidationSummary]:
    """The run's results in completion order, and its summary, from its events."""
    after = started.started_event_id - 1 if started.started_event_id else None
    results: dict[str, ValidationResult] = {}
    async for event in client.events(after):
        if isinstance(event, StreamReset):  # events lost: what they said is in the store
            for result in await _stored_results(client, resource, started.run_id):
                results.setdefault(result.id, result)
        elif isinstance(event, ValidationResultEvent) and event.result.run_id == started.run_id:
            results.setdefault(event.result.id, event.result)
        elif isinstance(event, ValidationCompleted) and event.run_id == started.run_id:
            return list(results.values()), event.summary
    raise StreamDropped(f"the event stream ended before run {started.run_id} completed")


async def _stored_results(client: AcpClient, resource: str, run_id: str) -> list[ValidationResult]:
    listed = await _all_results(client, resource, history=True)
    return [result for result in listed.results if result.run_id == run_id]


async def _results(client: AcpClient, args: argparse.Namespace) -> str:
    listed = await _all_results(client, args.resource, history=args.history)
    if args.json:
        return _json(listed.model_dump(mode="json"))
    if not listed.results:
        return f"no results yet; run: acp-backend validation run {args.resource}"
    return "\n".join(map(format_result, listed.results))


async def _all_results(
    client: AcpClient, resource: str, *, history: bool
) -> ValidationListResultsResult:
    """Every page of ``validation.list_results``, as one result."""
    results = await client.latest_results(resource, history=history)
    return ValidationListResultsResult(results=tuple(results))


def format_result(result: ValidationResult) -> str:
    """A result's headline, then one ``path:line:col: [code] message`` line per finding."""
    if result.outcome is ResultOutcome.COMPLETED:
        verdict = "passed" if result.passed else "failed"
    else:
        verdict = str(result.outcome).replace("_", " ")
    headline, *details = (result.message or "").splitlines() or [""]
    title = f"{result.validation} ({result.mode}): {verdict}"
    lines = [f"{title}: {headline}" if headline else title]
    lines += [f"  {detail}" for detail in details]
    lines += [f"  {format_finding(finding)}" for finding in result.findings]
    return "\n".join(lines)


def format_finding(finding: Finding) -> str:
    where = ""
    if finding.location is not None:
        at = finding.location
        where = f"{at.path}:{at.line + 1}:{at.character + 1}: "
    code = f"{finding.code} " if finding.code else ""
    return f"{where}{code}{finding.message}"


def _summary_line(run_id: str, summary: ValidationSummary) -> str:
    line = (
        f"run {run_id}: required {summary.required_passed} passed, "
        f"{summary.required_failed} failed; informational {summary.informational_passed} "
        f"passed, {summary.informational_failed} failed"
    )
    return line + (f"; {summary.cancelled} cancelled" if summary.cancelled else "")


def _required_failure(result: ValidationResult) -> bool:
    return result.mode is ValidationMode.REQUIRED and not result.passed


def _toml(value: Any) -> str:
    """A preset's field as it would be written in acp.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
