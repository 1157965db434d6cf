"""Server mode: JSON-RPC over ``POST /acp/v1`` and events over SSE.

The bearer token comes from the caller, a token file or ``$ACP_TOKEN``; it
is sent in a header and appears in no repr, log line or error message.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import ssl
from collections.abc import AsyncIterator, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from acp_client import jsonrpc
from acp_client.errors import AuthenticationError, ServerFault, TlsError
from acp_client.transport import TOKEN_ENV
from acp_client.transport.failures import TOKEN_REMEDY, check_status, classify
from acp_client.transport.policy import StreamPolicy
from acp_client.transport.sse import SseSubscription

if TYPE_CHECKING:
    from acp_client.events import Event

RPC_PATH = "/acp/v1"
EVENTS_PATH = "/acp/v1/events"
PARTIAL_QUERY = "?partial=1"  # partial results on the stream (ADR 0017)


def resolve_token(
    token: str | None = None,
    token_file: Path | None = None,
    environ: Mapping[str, str] = os.environ,
) -> str | None:
    """The explicit token, else the token file's first line, else ``$ACP_TOKEN``."""
    if token:
        return token
    if token_file is not None:
        try:
            text = token_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AuthenticationError(
                f"cannot read token file {token_file}: {type(exc).__name__}", remedy=TOKEN_REMEDY
            ) from None
        lines = text.strip().splitlines()
        if not lines:
            raise AuthenticationError(f"token file {token_file} is empty", remedy=TOKEN_REMEDY)
        return lines[0].strip()
    return environ.get(TOKEN_ENV) or None


class BearerAuth(httpx.Auth):
    def __init__(self, token: str) -> None:
        self._token = token

    def __repr__(self) -> str:
        return "BearerAuth(<hidden>)"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request


def check_url(url: str) -> httpx.URL:
    """``https://`` anywhere; plain ``http://`` only to this machine."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ValueError(f"not a URL: {url!r} ({exc})") from None
    if parsed.userinfo:
        # It would show in every error message; the token has its own channels.
        raise ValueError("credentials do not belong in the backend URL: use a token")
    if parsed.scheme == "https" and parsed.host:
        return parsed
    if parsed.scheme == "http" and _is_loopback(parsed.host):
        return parsed
    raise ValueError(f"backend URL {url!r} must be https:// (plain http only to loopback)")


def server_base(url: str) -> str:
    """The server's base URL, given either it or its endpoint (the README's
    ``https://host/acp/v1``): the paths are appended to the base."""
    base = url.rstrip("/")
    return base.removesuffix(RPC_PATH) if base.endswith(RPC_PATH) else base


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpTransport:
    """The ``Transport`` protocol over HTTP(S) + SSE."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        ca_bundle: Path | None = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        stream_policy: StreamPolicy | None = None,
    ) -> None:
        self.base_url = server_base(str(check_url(url)))
        self.description = f"ACP server at {self.base_url}"
        self.stream_policy = stream_policy or StreamPolicy()
        self._ids = itertools.count(1)
        self._http = httpx.AsyncClient(
            auth=BearerAuth(token) if token else None,
            verify=_tls_context(ca_bundle),
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            trust_env=False,
        )

    def __repr__(self) -> str:
        return f"HttpTransport({self.base_url!r})"

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        request_id = next(self._ids)
        body = jsonrpc.request(request_id, method, dict(params))
        try:
            response = await self._http.post(self.base_url + RPC_PATH, json=body)
        except httpx.HTTPError as exc:
            raise classify(exc, self.base_url) from exc
        check_status(response, self.base_url)
        try:
            payload = response.json()
        except ValueError:
            raise ServerFault(
                f"{self.base_url} answered HTTP {response.status_code} without JSON",
                status=response.status_code,
            ) from None
        return jsonrpc.unwrap(payload, request_id)

    def events(
        self, after: int | None = None, *, partial: bool = False
    ) -> AsyncIterator[dict[str, Any] | Event]:
        return self.subscription(after, partial=partial).__aiter__()

    def subscription(self, after: int | None = None, *, partial: bool = False) -> SseSubscription:
        """The subscription object itself, for callers that watch its counters."""
        url = self.base_url + EVENTS_PATH + (PARTIAL_QUERY if partial else "")
        return SseSubscription(self._http, url, self.base_url, self.stream_policy, after)

    async def aclose(self) -> None:
        await self._http.aclose()


def _tls_context(ca_bundle: Path | None) -> ssl.SSLContext:
    try:
        return ssl.create_default_context(cafile=str(ca_bundle) if ca_bundle else None)
    except (OSError, ssl.SSLError) as exc:
        raise TlsError(
            f"cannot load CA bundle {ca_bundle}: {type(exc).__name__}",
            remedy="pass a readable PEM file",
        ) from None
