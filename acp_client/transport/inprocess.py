"""Local mode: the backend runs in this process, behind a facade object.

The facade is loaded by import path (``"package.module:factory"``), so this
package never imports a backend and another one can be plugged in by
configuration alone. A call has the same time limit as over HTTP (the
read timeout): a backend stuck in this process is an outage the caller can
report, not a request that never ends; cancelling the caller cancels the call.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, cast

from acp_client.errors import AcpError, BackendTimeout, BackendUnreachable, InternalError
from acp_client.events import Event
from acp_client.head_start import DEFAULT_FACADE
from acp_client.transport import Facade, TypedCalls, subscribe

log = logging.getLogger(__name__)


def load_facade(spec: str, data_dir: Path | None) -> Facade:
    """Import ``spec`` (``"module:attr"``) and call it with ``data_dir``.

    Raises ``BackendUnreachable`` naming ``spec`` when it cannot be loaded.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise BackendUnreachable(
            f"facade import path {spec!r} is not of the form 'package.module:factory'"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BackendUnreachable(
            f"cannot import facade module {module_name!r} (from {spec!r}): {exc}",
            remedy="install the backend or fix the facade import path",
        ) from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise BackendUnreachable(f"facade factory {spec!r}: {module_name} has no callable {attr!r}")
    return cast(Callable[[Path | None], Facade], factory)(data_dir)


class InProcessTransport:
    """The ``Transport`` protocol over a facade in this process."""

    def __init__(
        self, facade: Facade, description: str = "in-process", read_timeout: float = 30.0
    ) -> None:
        self.facade = facade
        self.description = description
        self.read_timeout = read_timeout
        # Checked once: a protocol's isinstance walks its members (~0.1 ms a call).
        self._typed = facade if isinstance(facade, TypedCalls) else None

    @classmethod
    def load(
        cls, spec: str = DEFAULT_FACADE, data_dir: Path | None = None, read_timeout: float = 30.0
    ) -> InProcessTransport:
        where = f" on {data_dir}" if data_dir else ""
        return cls(load_facade(spec, data_dir), f"in-process {spec}{where}", read_timeout)

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        limit = asyncio.timeout(self.read_timeout)
        try:
            async with limit:
                return await self._dispatch(method, params)
        except TimeoutError:
            if not limit.expired():
                raise
            raise BackendTimeout(
                f"the in-process backend did not answer {method} within {self.read_timeout:g} s"
            ) from None

    async def _dispatch(self, method: str, params: Mapping[str, Any]) -> Any:
        try:
            if self._typed is not None:
                return await self._typed.call_typed(method, dict(params))
            return await self.facade.dispatch(method, dict(params))
        except AcpError:
            raise
        except Exception as exc:
            # The facade broke its contract; report it as the HTTP server would.
            log.exception("in-process %s failed", method)
            raise InternalError(f"{method} failed inside the backend") from exc

    def events(
        self, after: int | None = None, *, partial: bool = False
    ) -> AsyncIterator[dict[str, Any] | Event]:
        return subscribe(self.facade, after, partial)

    async def aclose(self) -> None:
        await self.facade.aclose()
