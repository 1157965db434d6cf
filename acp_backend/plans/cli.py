"""``acp-backend plan list|show|preview|apply|settle|cancel|create|propose``, through ACP."""

from __future__ import annotations

import argparse
import asyncio
import json
import os

from pydantic import TypeAdapter, ValidationError

from acp_backend.cli_support import Subcommands, client_command, format_table
from acp_backend.plans.sandbox import disk_use
from acp_client import AcpClient
from acp_client.errors import InvalidParams
from acp_client.events import PlanChanged
from acp_client.follow import follow_runs
from acp_client.models import WORKING_PLAN_STATES, Decision, Plan, PlanState
from acp_client.operations import PlanListResult

EMPTY_HINT = "no plans; create one with: acp-backend plan create RESOURCE --diff FILE --title T"


def register(subcommands: Subcommands) -> None:
    plan = subcommands.add_parser("plan", help="list, preview, apply and create plans")
    actions = plan.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser("list", help="list plans")
    listing.add_argument("--resource", help="only this resource's (name or id)")
    listing.add_argument(
        "--state", nargs="+", choices=[str(s) for s in PlanState], help="only plans in these states"
    )
    listing.add_argument("--json", action="store_true", help="print the ACP result as JSON")
    listing.set_defaults(run=client_command(_list))

    for name, run, text in (
        ("show", _show, "a plan with its decisions"),
        ("preview", _preview, "a plan's change set (unified diff) and its hash"),
        ("cancel", _cancel, "cancel a plan that has not ended"),
    ):
        sub = actions.add_parser(name, help=text)
        sub.add_argument("plan", help="the plan's id")
        sub.add_argument("--json", action="store_true", help="print the ACP result as JSON")
        sub.set_defaults(run=client_command(run))

    apply = actions.add_parser("apply", help="apply a plan, all or nothing")
    apply.add_argument("plan", help="the plan's id")
    apply.add_argument(
        "--hash",
        help="the plan_hash you previewed (default: the current one, so only a file that no "
        "longer matches the plan's base stops it)",
    )
    apply.add_argument("--force", action="store_true", help="apply a constrained plan (recorded)")
    apply.set_defaults(run=client_command(_apply))

    settle = actions.add_parser(
        "settle",
        help="a plan an editor applied (in_editor): applied if its change is on disk, back to "
        "what it was if the files hold their base (an editor that closed without saving)",
    )
    settle.add_argument("plan", help="the plan's id")
    settle.add_argument(
        "--in-buffers",
        action="store_true",
        help="an editor still holds the change in its buffers (do not take it back)",
    )
    settle.set_defaults(run=client_command(_settle))

    create = actions.add_parser("create", help="submit a unified diff as a plan")
    create.add_argument("resource", help="the resource's name or id")
    create.add_argument(
        "--diff",
        required=True,
        type=argparse.FileType("r", encoding="utf-8"),
        help="the diff file (paths relative to the resource root), or - for stdin",
    )
    create.add_argument("--title", required=True)
    create.add_argument("--description", default="")
    create.add_argument("--author", default="")
    create.add_argument(
        "--decisions",
        type=argparse.FileType("rb"),
        help="a JSON file: a list of {question, chosen, alternatives, rationale, confidence}",
    )
    create.set_defaults(run=client_command(_create))

    propose = actions.add_parser("propose", help="run a validation's fix in a sandbox, as a plan")
    propose.add_argument("resource", help="the resource's name or id")
    propose.add_argument("validation", help="a validation with a fix command")
    propose.set_defaults(run=client_command(_propose))


def _line(plan: Plan, sandbox: str) -> list[str]:
    return [plan.id, f"{plan.phase}/{plan.state}", sandbox, plan.title, ", ".join(plan.paths)]


def _sandbox_size(plan: Plan) -> str:
    """The disk its sandbox takes, as seen from here ("-": none; "?": the
    sandbox is on the server's machine, not this one)."""
    if plan.sandbox_root is None:
        return "-"
    if not os.path.isdir(plan.sandbox_root):
        return "?"
    return f"{disk_use(plan.sandbox_root) / 1e6:.1f} MB"


async def _list(client: AcpClient, args: argparse.Namespace) -> str:
    states = tuple(PlanState(s) for s in args.state) if args.state else None
    plans = await client.plan_list(args.resource, states)
    if args.json:
        return json.dumps(PlanListResult(plans=plans).model_dump(mode="json"), indent=2)
    if not plans:
        return EMPTY_HINT
    sizes = await asyncio.gather(*(asyncio.to_thread(_sandbox_size, p) for p in plans))
    rows = [_line(plan, size) for plan, size in zip(plans, sizes, strict=True)]
    return format_table(["ID", "STATE", "SANDBOX", "TITLE", "PATHS"], rows)


def _describe(plan: Plan) -> str:
    lines = [
        f"plan {plan.id}: {plan.title}",
        f"  state: {plan.phase}/{plan.state}" + (" (forced)" if plan.forced else ""),
        f"  origin: {plan.origin}"
        + (f" ({plan.source_validation})" if plan.source_validation else ""),
    ]
    lines += [f"  author: {plan.author}"] if plan.author else []
    lines += [f"  reason: {plan.reason}"] if plan.reason else []
    lines += [f"  sandbox: {plan.sandbox_root}"] if plan.sandbox_root else []
    lines += [f"  changes: {', '.join(plan.paths)}"] if plan.paths else []
    lines += [f"  {plan.description}"] if plan.description else []
    for d in plan.decisions:
        others = f" (over {', '.join(d.alternatives)})" if d.alternatives else ""
        lines.append(f"  decision: {d.question} -> {d.chosen}{others}, {d.confidence:.0%}")
        lines += [f"    {d.rationale}"] if d.rationale else []
    return "\n".join(lines)


async def _show(client: AcpClient, args: argparse.Namespace) -> str:
    plan = await client.plan_get(args.plan)
    return json.dumps(plan.model_dump(mode="json"), indent=2) if args.json else _describe(plan)


async def _preview(client: AcpClient, args: argparse.Namespace) -> str:
    preview = await client.plan_preview(args.plan)
    if args.json:
        return json.dumps(preview.model_dump(mode="json"), indent=2)
    moved = f"\nmoved since the plan was made: {', '.join(preview.moved)}" if preview.moved else ""
    diffs = "".join(change.diff for change in preview.changes)
    return f"{diffs}plan_hash: {preview.plan_hash} ({preview.state}){moved}"


async def _apply(client: AcpClient, args: argparse.Namespace) -> str:
    before = client.server.last_event_id if client.server else None
    expected = args.hash or (await client.plan_preview(args.plan)).plan_hash
    plan = await client.plan_apply(args.plan, expected, force=args.force)
    applied = f"applied {plan.id}: {', '.join(plan.paths)}" + (" (forced)" if plan.forced else "")
    return "\n".join([applied, *await _reruns(client, before, plan.resource_id)])


async def _reruns(client: AcpClient, before: int | None, resource_id: str) -> list[str]:
    """Wait for the validation runs the apply started (a backend in this very
    process would cancel them on exit) and summarise them."""
    return [
        f"re-ran validations: {s.required_failed} required failed, "
        f"{s.informational_failed} informational failed, "
        f"{s.required_passed + s.informational_passed} passed"
        for s in (done.summary for done in await follow_runs(client, before, resource_id))
    ]


async def _settle(client: AcpClient, args: argparse.Namespace) -> str:
    plan = await client.plan_settle(args.plan, in_buffers=args.in_buffers)
    return _describe(plan)


async def _cancel(client: AcpClient, args: argparse.Namespace) -> str:
    plan = await client.plan_cancel(args.plan)
    return json.dumps(plan.model_dump(mode="json"), indent=2) if args.json else _describe(plan)


async def _create(client: AcpClient, args: argparse.Namespace) -> str:
    with args.diff:
        diff = args.diff.read()
    decisions: tuple[Decision, ...] = ()
    if args.decisions:
        try:
            with args.decisions:
                decisions = TypeAdapter(tuple[Decision, ...]).validate_json(args.decisions.read())
        except ValidationError as exc:
            raise InvalidParams(f"--decisions: {exc.errors()[0]['msg']}") from None
    plan = await client.plan_create(
        args.resource,
        title=args.title,
        description=args.description,
        author=args.author,
        diff=diff,
        decisions=decisions,
    )
    return _describe(plan)


async def _propose(client: AcpClient, args: argparse.Namespace) -> str:
    """plan.execute, then follow plan.changed until the plan stops working."""
    after = client.server.last_event_id if client.server else None
    plan = await client.plan_execute(args.resource, args.validation)
    async for event in client.events(after if after is not None else 0):
        if isinstance(event, PlanChanged) and event.plan.id == plan.id:
            plan = event.plan
            if plan.state not in WORKING_PLAN_STATES:
                break
    return _describe(plan)
