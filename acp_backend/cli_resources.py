"""``acp-backend resource add|list|remove|resolve``."""

from __future__ import annotations

import argparse
import json

from acp_backend.cli_support import Subcommands, client_command, file_path, format_table
from acp_client import AcpClient
from acp_client.errors import AlreadyExists, NotFound
from acp_client.models import Resource
from acp_client.operations import ResourceListResult

EMPTY_HINT = "no resources registered; add one with: acp-backend resource add PATH"


def register(subcommands: Subcommands) -> None:
    resource = subcommands.add_parser("resource", help="register and list resources")
    actions = resource.add_subparsers(dest="action", required=True, metavar="ACTION")

    add = actions.add_parser("add", help="register a directory as a resource")
    add.add_argument(
        "path", type=file_path, help="the directory (relative to the current one, or absolute)"
    )
    add.add_argument("--name", help="the resource's name (default: the directory's name)")
    add.set_defaults(run=client_command(_add))

    listing = actions.add_parser("list", help="list registered resources")
    listing.add_argument("--json", action="store_true", help="print the ACP result as JSON")
    listing.set_defaults(run=client_command(_list))

    remove = actions.add_parser("remove", help="forget a resource (its files are untouched)")
    remove.add_argument("resource", help="the resource's name or id")
    remove.set_defaults(run=client_command(_remove))

    resolve = actions.add_parser("resolve", help="show which resource a path belongs to")
    resolve.add_argument("path", type=file_path, help="a file or directory, or a file: URI")
    resolve.set_defaults(run=client_command(_resolve))


async def _add(client: AcpClient, args: argparse.Namespace) -> str:
    try:
        resource = await client.resource_register(args.path, args.name)
    except AlreadyExists:
        # Every editor's README says to run this: doing it twice is no mistake.
        same = await _registered_as(client, args.path, args.name)
        if same is None:
            raise
        return f"{same.name} ({same.id}) is already registered at {same.root}"
    return f"registered {resource.name} ({resource.id}) at {resource.root}"


async def _registered_as(client: AcpClient, path: str, name: str | None) -> Resource | None:
    """The resource registered at exactly ``path``, if ``name`` is its name or unset."""
    try:
        resolved = await client.resource_resolve(path)
    except NotFound:
        return None
    at_root = resolved.logical_path == "." and not resolved.sandbox
    if at_root and name in (None, resolved.resource.name):
        return resolved.resource
    return None


async def _list(client: AcpClient, args: argparse.Namespace) -> str:
    resources = await client.resource_list()
    if args.json:
        result = ResourceListResult(resources=resources)
        return json.dumps(result.model_dump(mode="json"), indent=2)
    if not resources:
        return EMPTY_HINT
    rows = [[r.name, r.id, r.root + _sandboxes(len(r.sandbox_roots))] for r in resources]
    return format_table(["NAME", "ID", "ROOT"], rows)


def _sandboxes(count: int) -> str:
    return f" (+{count} sandbox{'es' if count > 1 else ''})" if count else ""


async def _remove(client: AcpClient, args: argparse.Namespace) -> str:
    resource = await client.resource_unregister(args.resource)
    return f"removed {resource.name} ({resource.id}); its files are untouched"


async def _resolve(client: AcpClient, args: argparse.Namespace) -> str:
    resolved = await client.resource_resolve(args.path)
    where = "sandbox of " if resolved.sandbox else ""
    return f"{where}{resolved.resource.name}: {resolved.logical_path}"
