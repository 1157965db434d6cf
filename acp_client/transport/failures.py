"""HTTP failures mapped to the client's exception types, by type and status only.

Never by message text: a business error that mentions "connection refused"
is still a business error.
"""

from __future__ import annotations

import ssl

import httpx

from acp_client.errors import (
    AuthenticationError,
    BackendTimeout,
    BackendUnreachable,
    ServerFault,
    TlsError,
    TransportError,
)

TOKEN_REMEDY = "set ACP_TOKEN or pass a token file; a local backend's token is in its backend.json"


def classify(exc: httpx.HTTPError, where: str) -> TransportError:
    """The outage an httpx exception means."""
    tls_cause = _tls_cause(exc)
    if tls_cause is not None:
        return TlsError(
            f"TLS with {where} failed: {type(tls_cause).__name__}",
            remedy="check the server certificate, or pass a CA bundle",
        )
    if isinstance(exc, httpx.TimeoutException):
        return BackendTimeout(f"{where} did not answer in time ({type(exc).__name__})")
    if isinstance(exc, httpx.ProtocolError):
        return ServerFault(f"{where} broke the HTTP protocol ({type(exc).__name__})")
    return BackendUnreachable(
        f"cannot reach {where} ({type(exc).__name__})", remedy="is the backend running?"
    )


def check_status(response: httpx.Response, where: str) -> None:
    """Raise for the statuses that carry no JSON-RPC answer."""
    status = response.status_code
    if status == 401:
        raise AuthenticationError(f"{where} refused the token (HTTP 401)", remedy=TOKEN_REMEDY)
    if status >= 500:
        raise ServerFault(f"{where} answered HTTP {status}", status=status)


def _tls_cause(exc: BaseException) -> BaseException | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
