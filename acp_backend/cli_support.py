"""Shared pieces of the ``acp-backend`` subcommands (which never print:
they return their output and ``acp_backend.cli`` writes it)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from acp_client import AcpClient
from acp_client.connect import connect
from acp_client.paths import normalize_path
from acp_client.signals import run_until_terminated

Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


@dataclass(frozen=True)
class Output:
    """A command's stdout text and its exit status, when it needs both."""

    text: str
    status: int


# A subcommand's ``run``: its stdout text, or an exit status, or both.
Command: TypeAlias = Callable[[argparse.Namespace], str | int | Output]

CLIENT_NAME = "acp-backend-cli"


def data_dir(args: argparse.Namespace) -> Path | None:
    """The global ``--data-dir`` (None: the backend's default)."""
    return Path(args.data_dir).expanduser() if args.data_dir else None


async def open_client(data_dir: Path | None) -> AcpClient:
    """An initialised client of the backend on ``data_dir``: the server
    already serving it if there is one, else the facade in this process.
    Either way through ACP like any client, never straight to the database."""
    client = await connect(data_dir=data_dir)
    try:
        await client.initialize(client_name=CLIENT_NAME)
    except BaseException:
        await client.aclose()
        raise
    return client


def client_command(
    action: Callable[[AcpClient, argparse.Namespace], Awaitable[str | Output]],
) -> Command:
    """A ``run`` for a subcommand that talks to the backend: ``action`` gets
    an initialised client, closed afterwards whatever happens."""

    def run(args: argparse.Namespace) -> str | Output:
        async def main() -> str | Output:
            async with await open_client(data_dir(args)) as client:
                return await action(client, args)

        return run_until_terminated(main())

    return run


def file_path(text: str) -> str:
    """An argparse ``type``: a path (relative ones against the current
    directory, which the backend does not share) or a ``file:`` URI."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the path is empty")
    try:
        return normalize_path(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; the last one is not padded."""
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    lines = [
        "  ".join(
            [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=False)] + [row[-1]]
        )
        for row in [headers, *rows]
    ]
    return "\n".join(lines)
