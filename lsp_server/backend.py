"""The link to the ACP backend: connect, notice outages, back off, reconnect.

Each (re)connection runs discovery again through ``acp_client.connect``, so
a backend that restarted on another port (local mode) is found again.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_server import __version__

if TYPE_CHECKING:  # the client (pydantic, httpx) loads when the first connection is made
    from acp_client.client import AcpClient
    from acp_client.operations import InitializeResult

log = logging.getLogger(__name__)


@dataclass
class Backoff:
    """Exponential steps (0.2 s, 0.4 s, ... capped at ``cap``), each jittered
    between half and all of its step so that clients spread out."""

    initial: float = 0.2
    cap: float = 5.0
    _attempt: int = field(default=0, init=False)

    def next(self) -> float:
        ceiling = min(self.cap, self.initial * 2**self._attempt)
        self._attempt += 1
        return random.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self._attempt = 0


@dataclass(frozen=True)
class BackendAddress:
    """Where the backend is: ``local`` (discovery, else in-process) or a URL."""

    acp: str = "local"
    data_dir: Path | None = None
    token_file: Path | None = None
    facade: str | None = None  # None: the client's default (the reference backend)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> BackendAddress:
        return cls(
            acp=args.acp, data_dir=args.data_dir, token_file=args.token_file, facade=args.facade
        )

    async def connect(self) -> AcpClient:
        from acp_client.connect import connect
        from acp_client.transport.inprocess import DEFAULT_FACADE
        from acp_client.transport.sse import StreamPolicy

        # The stream gives up quickly: our own loop then reconnects from
        # scratch, which re-runs discovery (a restarted backend moves port).
        return await connect(
            self.acp,
            data_dir=self.data_dir,
            token_file=self.token_file,
            facade=self.facade or DEFAULT_FACADE,
            stream_policy=StreamPolicy(max_attempts=2, backoff_initial=0.2, backoff_max=1.0),
        )

    def superseded(self, client: AcpClient) -> bool:
        """Local mode fell back to an in-process backend, and a server now
        serves the data dir: sharing it is better (one set of runs, cancel
        across clients). A file read and a lock probe, no network."""
        from acp_client.connect import should_rediscover

        return self.acp == "local" and should_rediscover(client, self.data_dir)


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


STREAM_PROVEN_AFTER = 10.0
"""Seconds an event stream must stay up before an outage counts as over:
until then a backend whose requests work but whose stream keeps failing is
still one outage (said once, backing off), not a new one every half second."""

LOST_WITHOUT = {
    "resource.resolve": "files cannot be placed in resources, so diagnostics are off",
    "resource.list": "resources nested inside an open folder are not found",
    "validation.list": "problems in acp.toml are not shown",
    "validation.list_results": "stored results are not shown, only results that arrive live",
    "validation.schema": "acp.toml gets no completion and no docs on hover",
    "validation.run": "the editor does not start validation runs (runs started elsewhere "
    "still show)",
    "validation.cancel": "cancelling a validation run from the editor does nothing",
    "context.inspect": "hover shows nothing",
    "plan.list": "plans are not offered as code actions nor listed as workspace symbols",
    "plan.get": "a plan's validation results are not shown on its sandbox's files",
    "plan.preview": "workspace symbols of plans lead to their file, not their first change",
}
"""What the user loses when the backend lacks an operation (said once, by name)."""


CONVENIENCES = frozenset({"validation.schema"})
"""Operations whose absence costs a help while typing, not something the
user would otherwise see: said in the log, not in a message."""


def degraded_message(operation: str) -> str:
    lost = LOST_WITHOUT.get(operation, "the features that need it are off")
    return f"The ACP backend does not offer {operation}: {lost}. Everything else keeps working."


class BackendLink:
    """Holds the current client; ``None`` while the backend is unreachable."""

    def __init__(self, address: BackendAddress) -> None:
        self._address = address
        self.client: AcpClient | None = None
        self.moved = asyncio.Event()  # a server now serves what this link fell back from

    def check_moved(self) -> bool:
        """Whether to switch to a server that appeared since connecting (the
        session's follow loop then reconnects); asked on requests, not polled."""
        if self.client is not None and self._address.superseded(self.client):
            self.moved.set()
        return self.moved.is_set()

    async def connect(self) -> tuple[AcpClient, InitializeResult]:
        """One attempt: a client that has completed ``acp.initialize``, and its answer."""
        self.moved.clear()
        client = await self._address.connect()
        try:
            answer = await client.initialize("acp-lsp", __version__)
        except BaseException:
            await client.aclose()
            raise
        self.client = client
        return client, answer

    async def drop(self) -> None:
        client, self.client = self.client, None
        if client is None:
            return
        try:
            await client.aclose()
        except Exception as exc:  # closing a dead link must not stop the reconnect
            log.debug("closing the ACP client failed: %s", exc)
