"""The link to the ACP backend: connect, tell an outage from a refusal,
wait before the next attempt, reconnect.

Each (re)connection runs discovery again through ``acp_client.connect``, so
a backend that restarted on another port (local mode) is found again.

A failure is classified before anything is retried (``is_refusal``): an
outage ends by itself, so the link backs off and any request may hurry the
next attempt; a refusal (a protocol version, a token, access) ends only
when something changes, so the link waits for a save, a command, new
settings, a changed token file, or a slow probe.
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import logging
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from acp_client.errors import AuthenticationError, Forbidden, VersionMismatch
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


def is_refusal(exc: BaseException | None) -> bool:
    """Whether a failure to connect, or to stay connected, is the backend
    refusing this client (a protocol version it does not speak, a token it
    rejects, access it forbids): retrying unchanged gets the same answer.
    Everything else (a refused or reset connection, a failed TLS handshake,
    a timeout, a 5xx, a stream that ended, a backend's internal error) is an
    outage, which ends by itself."""
    return isinstance(exc, (VersionMismatch, AuthenticationError, Forbidden))


REFUSAL_PROBE = 60.0
"""Seconds between attempts while the backend refuses and nothing changes."""

REQUEST_GAP = 0.5
"""Requests hurry a reconnect at most this often (a hover per mouse move
would otherwise be a connection attempt per mouse move)."""

TOKEN_FILE_CHECK = 2.0
"""Seconds between looks at the token file while a token is refused."""

TOKEN_SETTLE = 1.0
"""Seconds before a refused token is tried once more, read afresh: a token
file being rewritten (a server restarting with a new token) settles."""


class Prompt(enum.Enum):
    """What asks the link to try the backend before its timer."""

    REQUEST = "request"  # a hover, code action, completion: ends an outage's wait
    CHANGE = "change"  # a save, a command, new settings: ends any wait


class RetryGate:
    """Where the follow loop waits between attempts, and what ends the wait."""

    def __init__(self) -> None:
        self._prompted = asyncio.Event()
        self._prompted_by: frozenset[Prompt] = frozenset()
        self._by: Prompt | None = None
        self._attempted_at = 0.0
        self._watched_at_attempt: tuple[int, int] | None = None

    def attempting(self, watch: Path | None = None) -> None:
        """An attempt starts: the time, and how ``watch`` looks now (a change
        made during the attempt still ends the wait after it)."""
        self._attempted_at = asyncio.get_running_loop().time()
        self._watched_at_attempt = None if watch is None else _stamp(watch)

    def prompt(self, by: Prompt) -> None:
        """Try now, if the current wait is one ``by`` may end."""
        if by in self._prompted_by and not self._prompted.is_set():
            self._by = by
            self._prompted.set()

    async def wait(
        self, seconds: float, *, ended_by: frozenset[Prompt], watch: Path | None = None
    ) -> None:
        """``seconds``, or less: until a prompt in ``ended_by`` or a change
        to the ``watch`` file since the last attempt began."""
        self._prompted.clear()
        self._by = None
        self._prompted_by = ended_by
        try:
            async with asyncio.timeout(seconds):
                if watch is None:
                    await self._prompted.wait()
                else:
                    await self._prompted_or_changed(watch)
        except TimeoutError:
            return
        finally:
            self._prompted_by = frozenset()
        if self._by is Prompt.REQUEST:
            loop = asyncio.get_running_loop()
            await asyncio.sleep(max(0.0, self._attempted_at + REQUEST_GAP - loop.time()))

    async def _prompted_or_changed(self, path: Path) -> None:
        while _stamp(path) == self._watched_at_attempt:
            try:
                async with asyncio.timeout(TOKEN_FILE_CHECK):
                    await self._prompted.wait()
                return
            except TimeoutError:
                continue


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


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
        from acp_client.head_start import DEFAULT_FACADE
        from acp_client.transport.policy import StreamPolicy

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


def degraded_message(operation: str, refusal: Exception | None = None) -> str:
    lost = LOST_WITHOUT.get(operation, "the features that need it are off")
    why = f"refuses {operation} ({refusal})" if refusal else f"does not offer {operation}"
    return f"The ACP backend {why}: {lost}. Everything else keeps working."


class BackendLink:
    """Holds the current client; ``None`` while the backend is unreachable."""

    def __init__(self, address: BackendAddress) -> None:
        self._address = address
        self.client: AcpClient | None = None
        self.moved = asyncio.Event()  # a server now serves what this link fell back from
        self.retry = RetryGate()

    @property
    def token_file(self) -> Path | None:
        return self._address.token_file

    def wanted(self, by: Prompt) -> None:
        """Something needs the backend: while it is away, try again now
        (once at a time: the follow loop is the only one that connects)."""
        if self.client is None:
            self.retry.prompt(by)

    def check_moved(self) -> bool:
        """Whether to switch to a server that appeared since connecting (the
        session's follow loop then reconnects); asked on requests, not polled."""
        if self.client is not None and self._address.superseded(self.client):
            self.moved.set()
        return self.moved.is_set()

    async def connect(self) -> tuple[AcpClient, InitializeResult]:
        """One attempt: a client that has completed ``acp.initialize``, and its answer."""
        self.moved.clear()
        self.retry.attempting(self._address.token_file)
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
