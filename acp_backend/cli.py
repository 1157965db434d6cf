"""``acp-backend``: the reference backend's command line.

Subcommands live in modules with a ``register(subcommands)`` function that
adds their parsers and sets ``run`` (see ``acp_backend.cli_support``); a new
group of commands is one line in ``REGISTRARS``. Only this module prints:
a command returns its output, and every failure becomes one line,
``error: <message> (<remedy>)``, with exit status 2 and no traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from acp_backend import cli_resources
from acp_backend.cli_support import Output, Subcommands, data_dir
from acp_backend.facade import create_facade
from acp_backend.http_server import serve
from acp_backend.plans import cli as plans_cli
from acp_backend.plans.lifecycle import Swept, plans_of
from acp_backend.validation import cli as validation_cli
from acp_client.errors import AcpError
from acp_client.signals import Terminated, run_until_terminated

log = logging.getLogger(__name__)

ERROR_STATUS = 2


def register_serve(subcommands: Subcommands) -> None:
    parser = subcommands.add_parser("serve", help="serve ACP over HTTP (JSON-RPC + SSE)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument("--port", type=int, default=0, help="port (default: any free one)")
    parser.add_argument("--tls-cert", type=Path, help="TLS certificate (PEM)")
    parser.add_argument("--tls-key", type=Path, help="TLS private key (PEM)")
    parser.add_argument(
        "--insecure-bind",
        action="store_true",
        help="allow a non-loopback bind without TLS (the token travels in clear)",
    )
    parser.set_defaults(run=_serve, log_level=logging.INFO)


def _serve(args: argparse.Namespace) -> int:
    return serve(
        data_dir(args),
        host=args.host,
        port=args.port,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        insecure_bind=args.insecure_bind,
    )


def register_gc(subcommands: Subcommands) -> None:
    parser = subcommands.add_parser(
        "gc",
        help="expire plans whose sandbox outlived $ACP_SANDBOX_TTL_HOURS (default 24), remove "
        "sandboxes no open plan owns, prune their git worktrees",
    )
    parser.set_defaults(run=_gc)


def _gc(args: argparse.Namespace) -> str:
    """Local upkeep of the data dir, safe beside a server using it: plans
    move by compare-and-set, and only sandboxes of ended plans are removed."""

    async def sweep() -> Swept:
        facade = create_facade(data_dir(args))
        try:
            return await asyncio.to_thread(plans_of(facade.services).sweep)
        finally:
            await facade.aclose()

    swept = run_until_terminated(sweep())
    lines = [f"expired plan {plan_id}" for plan_id in swept.expired]
    lines += [f"removed sandbox {name}" for name in swept.removed]
    lines.append(
        f"{len(swept.expired)} plan(s) expired, {len(swept.removed)} sandbox(es) removed, "
        f"{swept.freed_bytes / 1e6:.1f} MB freed"
    )
    return "\n".join(lines)


# Each adds a group of subcommands.
REGISTRARS: tuple[Callable[[Subcommands], None], ...] = (
    cli_resources.register,
    validation_cli.register,
    plans_cli.register,
    register_serve,
    register_gc,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-backend", description="The reference ACP backend of acp-lsp."
    )
    parser.add_argument(
        "--data-dir",
        help="where the backend keeps its state (default: $ACP_DATA_DIR, "
        "else the XDG data dir's acp-lsp/)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in REGISTRARS:
        register(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.DEBUG if args.verbose else getattr(args, "log_level", logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        outcome = args.run(args)
    except KeyboardInterrupt:
        return 130
    except Terminated as exc:  # the backend it hosted has ended its validators
        print(f"error: {exc}", file=sys.stderr)
        return exc.status
    except AcpError as exc:
        return _fail(str(exc))
    except (OSError, sqlite3.Error) as exc:
        return _fail(f"{exc} (check --data-dir and its permissions)")
    except ValueError as exc:  # refused settings, e.g. an unsafe bind
        return _fail(str(exc))
    except Exception as exc:
        log.debug("unexpected failure", exc_info=True)
        return _fail(f"unexpected {type(exc).__name__}: {exc} (rerun with --verbose for details)")
    if isinstance(outcome, int):
        return outcome
    if isinstance(outcome, Output):
        if outcome.text:
            print(outcome.text)
        return outcome.status
    if outcome:
        print(outcome)
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return ERROR_STATUS


if __name__ == "__main__":
    sys.exit(main())
