"""Command-line options of ``acp-lsp`` and ``acp-lsp check``.

Argparse alone: ``--help``, ``--version`` and a usage error load nothing
else (the backend connection pulls in asyncio and the ACP client).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--acp",
        default="local",
        metavar="local|URL",
        help="'local' (default): the backend serving the data dir if one runs, else "
        "in-process; or a server URL (https://..., or http:// on loopback)",
    )
    parser.add_argument(
        "--token-file", type=Path, help="file holding the server's token (else $ACP_TOKEN)"
    )
    parser.add_argument(
        "--data-dir", type=Path, help="backend data dir (else $ACP_DATA_DIR, else XDG data dir)"
    )
    parser.add_argument(
        "--facade",
        default=None,
        metavar="MODULE:FACTORY",
        help="the in-process backend local mode loads (default: the reference backend)",
    )


def check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-lsp check",
        description="Run a resource's validations and print the findings as the editor shows them.",
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    parser.add_argument("--format", choices=["text", "json", "sarif"], default="text")
    add_target_options(parser)
    parser.add_argument(
        "--no-run", action="store_true", help="report the latest results, start no run"
    )
    parser.add_argument(
        "--register",
        action="store_true",
        help="register each PATH directory that is in no resource yet (otherwise: exit 2)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait for the run (default 600)"
    )
    parser.add_argument(
        "--fix",
        action="store_true",
        help="apply the fixes the tools attached to the findings (one plan per resource), "
        "then report what is left; only those the tools call safe",
    )
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix, apply the fixes the tools call unsafe too (as ruff's --unsafe-fixes)",
    )
    return parser
