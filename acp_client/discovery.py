"""Local mode: find a backend already serving this data dir, with proof of life.

A running ``acp-backend serve`` holds an exclusive lock on
``<data-dir>/serve.lock`` for as long as it lives and publishes
``<data-dir>/backend.json`` (its scheme, address, port and token). The file
is trusted only if it parses, names this data dir, the lock is held (for a
file without a lock file, from an older server: its pid is alive) and
``GET /health`` answers. A held lock proves the server is alive, so a slow
``/health`` (a loaded machine) is retried with growing budgets for up to
``DISCOVERY_PATIENCE`` seconds before the caller falls back to in-process;
without that proof one short probe decides. Nothing here is fatal.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from acp_client.head_start import BACKEND_FILE

if TYPE_CHECKING:  # loaded only once there is a server to probe (connect.py says why)
    import httpx

log = logging.getLogger(__name__)

LOCK_FILE = "serve.lock"
HEALTH_TIMEOUT = 0.3  # the first probe's budget; each retry doubles it
DISCOVERY_PATIENCE = 6.0  # seconds a live server's /health may take in all


class BackendInfo(BaseModel):
    """The contents of ``backend.json``. The token never shows in a repr."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    port: int = Field(gt=0, lt=65536)
    token: str = Field(min_length=1, repr=False)
    pid: int = Field(gt=0)
    data_dir: str
    started_at: datetime
    version: str
    # Where to reach it; the defaults are what servers before these fields meant.
    scheme: Literal["http", "https"] = "http"
    host: str = "127.0.0.1"
    # The certificate it serves over https: a local client trusts exactly that.
    tls_cert: str | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def connect_host(bind: str) -> str:
    """The address a local client reaches a server bound to ``bind`` at."""
    try:
        address = ipaddress.ip_address(bind.strip("[]"))
    except ValueError:
        return bind  # a name, e.g. localhost
    if address.is_unspecified:  # every interface: loopback of the same family
        return "::1" if address.version == 6 else "127.0.0.1"
    return str(address)


def read_backend_file(data_dir: Path) -> BackendInfo | None:
    """``backend.json`` if it parses and belongs to ``data_dir``, else ``None``."""
    path = data_dir / BACKEND_FILE
    try:
        info = BackendInfo.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError) as exc:
        log.debug("ignoring unreadable %s: %s", path, type(exc).__name__)
        return None
    if not _same_dir(Path(info.data_dir), data_dir):
        log.debug("ignoring %s: it belongs to %s", path, info.data_dir)
        return None
    return info


def pid_alive(pid: int) -> bool:
    if os.name == "nt":
        return True  # os.kill(pid, 0) would signal it there; /health decides alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else: /health decides
    return True


def tls_context(info: BackendInfo) -> ssl.SSLContext | bool:
    """What verifies the server of ``info``: its own certificate, if it named one."""
    if info.scheme != "https" or info.tls_cert is None:
        return True
    return ssl.create_default_context(cafile=info.tls_cert)


@contextmanager
def _lock_probe(data_dir: Path) -> Iterator[bool | None]:
    """Whether a server holds ``serve.lock`` (None: no lock file, or no flock here)."""
    try:
        import fcntl
    except ImportError:  # Windows: the pid and /health decide
        yield None
        return
    try:
        fd = os.open(data_dir / LOCK_FILE, os.O_RDONLY)
    except OSError:
        yield None
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        held = True
    else:
        held = False  # released at once below: a starting server retries its lock
    try:
        yield held
    finally:
        os.close(fd)


def server_alive(data_dir: Path, info: BackendInfo) -> bool | None:
    """True when a server provably holds the data dir, False when provably not,
    None when only ``/health`` can tell (no lock file: an older server)."""
    with _lock_probe(data_dir) as held:
        if held is not None:
            return held
    return None if pid_alive(info.pid) else False


async def health_ok(
    url: str, budget: float = HEALTH_TIMEOUT, verify: ssl.SSLContext | bool = True
) -> bool:
    """True when ``url`` answers ``GET /health`` correctly within ``budget`` seconds."""
    import httpx

    async with httpx.AsyncClient(trust_env=False, verify=verify) as http:
        return await _probe(http, url, budget)


async def _probe(http: httpx.AsyncClient, url: str, budget: float) -> bool:
    # Only the request is timed: making the client (a TLS context) is CPU
    # that a loaded machine would otherwise charge to the server.
    import httpx

    try:
        async with asyncio.timeout(budget):
            response = await http.get(f"{url}/health")
            healthy = response.status_code == 200 and response.json() == {"status": "ok"}
    except (httpx.HTTPError, ValueError, TimeoutError, ssl.SSLError) as exc:
        log.debug("no healthy backend at %s: %s", url, type(exc).__name__)
        return False
    if not healthy:
        log.debug("%s/health answered HTTP %d: not an ACP backend", url, response.status_code)
    return healthy


async def discover(
    data_dir: Path,
    health_timeout: float = HEALTH_TIMEOUT,
    patience: float = DISCOVERY_PATIENCE,
) -> BackendInfo | None:
    """The live backend serving ``data_dir``, or ``None`` (logged at debug,
    or as a warning when a live server kept failing its health probe)."""
    deadline = time.monotonic() + patience
    budget = health_timeout
    while True:
        info = read_backend_file(data_dir)  # again each time: it may have restarted
        if info is None:
            return None
        alive = server_alive(data_dir, info)
        if alive is False:
            log.debug("ignoring %s: no server holds the data dir", data_dir / BACKEND_FILE)
            return None
        if info.scheme == "http" and not _loopback(info.host):
            log.warning("not using %s: plain http beyond loopback would expose the token", info.url)
            return None
        try:
            verify = tls_context(info)
        except (OSError, ssl.SSLError) as exc:
            log.warning("cannot use the certificate of the backend at %s: %s", info.url, exc)
            return None
        import httpx

        async with httpx.AsyncClient(trust_env=False, verify=verify) as http:
            while True:
                if await _probe(http, info.url, budget):
                    return info
                left = deadline - time.monotonic()
                if alive is None or left <= 0:
                    if alive:
                        log.warning("the backend at %s is alive but not answering", info.url)
                    return None
                budget = min(2 * budget, left)
                if read_backend_file(data_dir) != info:
                    break  # restarted meanwhile: look again


def server_appeared(data_dir: Path) -> bool:
    """Cheap, no network: does a server now hold ``data_dir``? A client that
    fell back to in-process should then reconnect (``connect`` finds it)."""
    info = read_backend_file(data_dir)
    return info is not None and server_alive(data_dir, info) is not False


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
