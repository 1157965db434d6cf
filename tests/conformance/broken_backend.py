"""The reference backend with one thing broken, to prove the kit catches it.

Facade factories for ``--acp local --facade tests.conformance.broken_backend:NAME``,
and ``python -m tests.conformance.broken_backend NAME DATA_DIR PORT TOKEN_FILE``
to serve one over HTTP the way ``acp-backend serve`` does.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import uvicorn

from acp_backend.facade import BackendFacade, create_facade
from acp_backend.http_server import create_app
from acp_client.errors import InternalError, NotFound
from acp_client.operations import canonical_method


class Broken:
    """Passes everything through to the reference facade."""

    def __init__(self, data_dir: Path | None) -> None:
        self.inner: BackendFacade = create_facade(data_dir)

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        return await self.inner.dispatch(method, params)

    def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        return self.inner.subscribe(after)

    async def aclose(self) -> None:
        await self.inner.aclose()


class WrongErrorCode(Broken):
    """NOT_FOUND is answered as an internal error (-32603, INTERNAL)."""

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        try:
            return await super().dispatch(method, params)
        except NotFound as exc:
            raise InternalError(exc.message) from None


class EventGap(Broken):
    """Resuming after an event id loses the first event after it."""

    async def subscribe(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        skip = after is not None
        async for message in self.inner.subscribe(after):
            if skip and message.get("method") != "stream.reset":
                skip = False
                continue
            yield message


class MissingField(Broken):
    """resource.list's resources lack their required created_at."""

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        result = await super().dispatch(method, params)
        if canonical_method(method) == "resource.list":
            for resource in result["resources"]:
                resource.pop("created_at")
        return result


def wrong_error_code(data_dir: Path | None) -> WrongErrorCode:
    return WrongErrorCode(data_dir)


def event_gap(data_dir: Path | None) -> EventGap:
    return EventGap(data_dir)


def missing_field(data_dir: Path | None) -> MissingField:
    return MissingField(data_dir)


FACTORIES = {
    "wrong_error_code": wrong_error_code,
    "event_gap": event_gap,
    "missing_field": missing_field,
}


def main(argv: list[str]) -> None:
    name, data_dir, port, token_file = argv
    token = secrets.token_urlsafe(16)
    Path(token_file).write_text(token + "\n", encoding="utf-8")
    app = create_app(FACTORIES[name](Path(data_dir)), token, keepalive_interval=1.0)
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
