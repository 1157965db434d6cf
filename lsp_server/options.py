"""Command-line options shared by ``acp-lsp`` and ``acp-lsp check``.

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
