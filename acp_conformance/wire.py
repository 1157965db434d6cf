"""Raw access to a backend: whole JSON-RPC responses and raw event messages.

The kit checks what a backend puts on the wire, so it does not go through
``AcpClient`` (which validates, retries under A2A names and de-duplicates
events): it needs to see the mistakes a client would paper over.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any, Protocol, cast

import httpx

from acp_client import jsonrpc
from acp_client.errors import RemoteError
from acp_client.transport import Facade
from acp_client.transport.http import EVENTS_PATH, RPC_PATH, check_url, resolve_token
from acp_client.transport.inprocess import load_facade
from acp_conformance.options import KitOptions

Message = dict[str, Any]


def _json(value: object) -> Any:
    """As the value would arrive over the wire (tuples become lists)."""
    return json.loads(json.dumps(value))


class Wire(Protocol):
    description: str

    async def call(self, method: str, params: object) -> Message:
        """The whole JSON-RPC response (``result`` or ``error``)."""
        ...

    def events(self, after: int | None) -> AsyncGenerator[Message, None]: ...

    async def aclose(self) -> None: ...


class LocalWire:
    """A facade loaded in this process (``--acp local --facade MODULE:FACTORY``)."""

    def __init__(self, spec: str, data_dir: Path) -> None:
        self.facade: Facade = load_facade(spec, data_dir)
        self.description = f"in-process {spec} on {data_dir}"
        self._ids = itertools.count(1)

    async def call(self, method: str, params: object) -> Message:
        request_id = next(self._ids)
        try:
            result = await self.facade.dispatch(method, params)  # type: ignore[arg-type]
        except RemoteError as exc:
            return jsonrpc.failure(request_id, exc.to_error_object())
        except Exception as exc:
            # Not an ACP refusal: shown as an error object that lacks data.code.
            message = f"the facade raised {type(exc).__name__}: {exc}"
            return jsonrpc.failure(request_id, {"code": -32603, "message": message})
        return jsonrpc.success(request_id, _json(result))

    async def events(self, after: int | None) -> AsyncGenerator[Message, None]:
        subscription = cast(AsyncGenerator[Message, None], self.facade.subscribe(after))
        async with contextlib.aclosing(subscription) as stream:
            async for message in stream:
                yield _json(message)

    async def aclose(self) -> None:
        await self.facade.aclose()


class HttpWire:
    """A server: ``POST {base}/acp/v1`` and SSE at ``{base}/acp/v1/events``.

    ``framing`` collects every way the event stream's SSE framing breaks the
    contract (``id:`` equal to the event id, one JSON-RPC notification per
    ``data:``), for the framing check to report.
    """

    def __init__(self, base: str, token_file: Path | None, timeout: float) -> None:
        self.base = str(check_url(base)).rstrip("/")
        self.description = f"ACP server at {self.base}"
        self.token = resolve_token(None, token_file)
        self.framing: list[str] = []
        self.content_types: set[str] = set()
        self._ids = itertools.count(1)
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(timeout), trust_env=False)

    def headers(self, token: str | None = "") -> dict[str, str]:
        """Headers with our token (``token=""``), another one, or none (``None``)."""
        value = self.token if token == "" else token
        return {} if value is None else {"Authorization": f"Bearer {value}"}

    async def post(self, body: bytes, token: str | None = "") -> httpx.Response:
        headers = {**self.headers(token), "Content-Type": "application/json"}
        return await self._http.post(self.base + RPC_PATH, content=body, headers=headers)

    async def get(self, path: str, token: str | None = "") -> httpx.Response:
        return await self._http.get(self.base + path, headers=self.headers(token))

    async def call(self, method: str, params: object) -> Message:
        request_id = next(self._ids)
        body = json.dumps(jsonrpc.request(request_id, method, params)).encode()  # type: ignore[arg-type]
        response = await self.post(body)
        assert response.status_code != 401, f"HTTP 401 for {method}: check --acp-token-file"
        try:
            answer: Message = response.json()
        except ValueError:
            raise AssertionError(
                f"{method}: HTTP {response.status_code} answer is not JSON: {response.text:.120}"
            ) from None
        return answer

    async def events(self, after: int | None) -> AsyncGenerator[Message, None]:
        headers = self.headers()
        if after is not None:
            headers["Last-Event-ID"] = str(after)
        timeout = httpx.Timeout(self._http.timeout.connect, read=None)
        async with self._http.stream(
            "GET", self.base + EVENTS_PATH, headers=headers, timeout=timeout
        ) as response:
            assert response.status_code == 200, f"events: HTTP {response.status_code}"
            self.content_types.add(response.headers.get("content-type", ""))
            frame: list[str] = []
            async for line in response.aiter_lines():
                if line:
                    frame.append(line)
                    continue
                message = self._frame(frame)
                frame = []
                if message is not None:
                    yield message

    def _frame(self, lines: list[str]) -> Message | None:
        """The notification of one SSE frame; framing faults go to ``framing``."""
        fields: dict[str, list[str]] = {}
        for line in lines:
            if line.startswith(":"):
                continue  # a comment (keep-alive)
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value.removeprefix(" "))
        if "data" not in fields:
            return None
        text = "\n".join(fields["data"])
        try:
            message = json.loads(text)
        except ValueError:
            self.framing.append(f"data is not JSON: {text:.120}")
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "id" in message:
            self.framing.append(f"data is not a JSON-RPC 2.0 notification: {text:.120}")
            return None
        params = message.get("params")
        event_id = params.get("event_id") if isinstance(params, dict) else None
        if fields.get("id") != [str(event_id)]:
            self.framing.append(f"SSE id {fields.get('id')} is not the event id {event_id!r}")
        return message

    async def aclose(self) -> None:
        await self._http.aclose()


def open_wire(options: KitOptions, data_dir: Path) -> Wire:
    """The backend ``options`` name: loaded in this process, or over HTTP."""
    if options.local:
        return LocalWire(options.facade, data_dir)
    return HttpWire(options.acp, options.token_file, options.timeout)


async def collect(
    wire: Wire,
    after: int | None,
    done: Callable[[list[Message]], bool],
    timeout_s: float,
) -> list[Message]:
    """Events after ``after`` until ``done(events)`` or ``timeout_s`` (then what came)."""
    seen: list[Message] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout_s):
            async with contextlib.aclosing(wire.events(after)) as stream:
                async for message in stream:
                    seen.append(message)
                    if done(seen):
                        break
    return seen


def event_id(message: Message) -> object:
    params = message.get("params")
    return params.get("event_id") if isinstance(params, dict) else None
