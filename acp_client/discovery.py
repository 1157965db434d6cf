"""Local mode: find a backend already serving this data dir, with proof of life.

A running ``acp-backend serve`` publishes ``<data-dir>/backend.json``. The
file is trusted only if it parses, names this data dir, its pid is alive and
``GET /health`` answers within a short budget. Anything less means "no
backend running": the caller falls back to in-process. Nothing here is fatal.
"""

from __future__ import annotations

import asyncio
import logging
import os
from datetime import datetime
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

log = logging.getLogger(__name__)

BACKEND_FILE = "backend.json"
HEALTH_TIMEOUT = 0.3


class BackendInfo(BaseModel):
    """The contents of ``backend.json``. The token never shows in a repr."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    port: int = Field(gt=0, lt=65536)
    token: str = Field(min_length=1, repr=False)
    pid: int = Field(gt=0)
    data_dir: str
    started_at: datetime
    version: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


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


async def health_ok(url: str, budget: float = HEALTH_TIMEOUT) -> bool:
    """True when ``url`` answers ``GET /health`` correctly within ``budget`` seconds."""
    try:
        async with asyncio.timeout(budget), httpx.AsyncClient(trust_env=False) as http:
            response = await http.get(f"{url}/health")
            healthy = response.status_code == 200 and response.json() == {"status": "ok"}
    except (httpx.HTTPError, ValueError, TimeoutError) as exc:
        log.debug("no healthy backend at %s: %s", url, type(exc).__name__)
        return False
    if not healthy:
        log.debug("%s/health answered HTTP %d: not an ACP backend", url, response.status_code)
    return healthy


async def discover(data_dir: Path, health_timeout: float = HEALTH_TIMEOUT) -> BackendInfo | None:
    """The live backend serving ``data_dir``, or ``None`` (logged at debug)."""
    info = read_backend_file(data_dir)
    if info is None:
        return None
    if not pid_alive(info.pid):
        log.debug("ignoring %s: pid %d is gone", data_dir / BACKEND_FILE, info.pid)
        return None
    if not await health_ok(info.url, health_timeout):
        return None
    return info


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
