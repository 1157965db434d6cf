"""The ACP error catalog and the client-side exception hierarchy.

Two families never mix: ``TransportError`` means the backend could not be
reached or answered garbage (an outage), ``RemoteError`` means the backend
answered and said no (a business outcome). Callers branch on the type, never
on message text.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Any, ClassVar


class ErrorCode(IntEnum):
    """JSON-RPC error codes: the standard ones plus CleverAgents' domain range."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    NOT_FOUND = -32001
    AUTHENTICATION_REQUIRED = -32002
    FORBIDDEN = -32003
    INVALID_STATE = -32004
    ALREADY_EXISTS = -32005
    BUDGET_EXCEEDED = -32006
    VERSION_MISMATCH = -32007
    PLAN_ERROR = -32008
    # Ours: the two-phase apply found the workspace moved since preview.
    CONFLICT = -32010


class ErrorKind(StrEnum):
    """Stable string codes carried in ``error.data.code``; safe to match on."""

    PARSE_ERROR = "PARSE_ERROR"
    INVALID_REQUEST = "INVALID_REQUEST"
    METHOD_NOT_FOUND = "METHOD_NOT_FOUND"
    INVALID_PARAMS = "INVALID_PARAMS"
    INTERNAL = "INTERNAL"
    NOT_FOUND = "NOT_FOUND"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN = "FORBIDDEN"
    INVALID_STATE = "INVALID_STATE"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
    VERSION_MISMATCH = "VERSION_MISMATCH"
    PLAN_ERROR = "PLAN_ERROR"
    CONFLICT = "CONFLICT"
    OUTSIDE_ROOT = "OUTSIDE_ROOT"
    # Client-side only: never sent by a backend.
    BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
    UNSUPPORTED = "UNSUPPORTED"


class AcpError(Exception):
    """Base of everything this package raises."""

    kind: ClassVar[ErrorKind] = ErrorKind.INTERNAL
    remedy: str | None

    def __init__(self, message: str, *, remedy: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.remedy = remedy

    def __str__(self) -> str:
        return f"{self.message} ({self.remedy})" if self.remedy else self.message


# --- Outages -----------------------------------------------------------------


class TransportError(AcpError):
    """The backend could not be reached, or its answer was not ACP."""

    kind = ErrorKind.BACKEND_UNAVAILABLE


class BackendUnreachable(TransportError):
    """Connection refused, DNS failure, no backend process."""


class BackendTimeout(TransportError):
    """Connect or read timeout."""


class TlsError(TransportError):
    """Certificate verification or handshake failed."""


class ServerFault(TransportError):
    """HTTP 5xx, or a body that is not a JSON-RPC response."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message, remedy="check the backend's log")
        self.status = status


class StreamDropped(TransportError):
    """The event stream ended or went silent past the keep-alive window."""


# --- Authentication ------------------------------------------------------------


class AuthenticationError(AcpError):
    """HTTP 401 or ACP -32002: the token is missing or wrong. Never an outage."""

    kind = ErrorKind.UNAUTHORIZED


# --- The backend does not offer it -------------------------------------------------


class Unsupported(AcpError):
    """The backend does not offer an operation (absent from ``acp.initialize``'s
    list, or refused as unknown). A degraded feature, never an outage."""

    kind = ErrorKind.UNSUPPORTED

    def __init__(self, operation: str) -> None:
        super().__init__(
            f"the ACP backend does not offer {operation}",
            remedy="upgrade the backend, or use one that implements it",
        )
        self.operation = operation


# --- The backend said no --------------------------------------------------------


class RemoteError(AcpError):
    """A JSON-RPC error object returned by the backend."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL_ERROR
    kind = ErrorKind.INTERNAL

    def __init__(
        self,
        message: str,
        *,
        remedy: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, remedy=remedy)
        self.data: dict[str, Any] = dict(data or {})

    def to_error_object(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member for this exception."""
        data: dict[str, Any] = {**self.data, "code": str(self.kind)}
        if self.remedy:
            data["remedy"] = self.remedy
        return {"code": int(self.code), "message": self.message, "data": data}


class ParseError(RemoteError):
    code = ErrorCode.PARSE_ERROR
    kind = ErrorKind.PARSE_ERROR


class InvalidRequest(RemoteError):
    code = ErrorCode.INVALID_REQUEST
    kind = ErrorKind.INVALID_REQUEST


class MethodNotFound(RemoteError):
    code = ErrorCode.METHOD_NOT_FOUND
    kind = ErrorKind.METHOD_NOT_FOUND


class InvalidParams(RemoteError):
    code = ErrorCode.INVALID_PARAMS
    kind = ErrorKind.INVALID_PARAMS


class InternalError(RemoteError):
    code = ErrorCode.INTERNAL_ERROR
    kind = ErrorKind.INTERNAL


class NotFound(RemoteError):
    code = ErrorCode.NOT_FOUND
    kind = ErrorKind.NOT_FOUND


class OutsideRoot(NotFound):
    """A path lies outside every root it was checked against (path jail)."""

    kind = ErrorKind.OUTSIDE_ROOT


class AuthenticationRequired(RemoteError, AuthenticationError):
    code = ErrorCode.AUTHENTICATION_REQUIRED
    kind = ErrorKind.UNAUTHORIZED


class Forbidden(RemoteError):
    code = ErrorCode.FORBIDDEN
    kind = ErrorKind.FORBIDDEN


class InvalidState(RemoteError):
    code = ErrorCode.INVALID_STATE
    kind = ErrorKind.INVALID_STATE


class AlreadyExists(RemoteError):
    code = ErrorCode.ALREADY_EXISTS
    kind = ErrorKind.ALREADY_EXISTS


class BudgetExceeded(RemoteError):
    code = ErrorCode.BUDGET_EXCEEDED
    kind = ErrorKind.BUDGET_EXCEEDED


class VersionMismatch(RemoteError):
    code = ErrorCode.VERSION_MISMATCH
    kind = ErrorKind.VERSION_MISMATCH


class PlanError(RemoteError):
    code = ErrorCode.PLAN_ERROR
    kind = ErrorKind.PLAN_ERROR


class Conflict(RemoteError):
    code = ErrorCode.CONFLICT
    kind = ErrorKind.CONFLICT


_BY_KIND: dict[str, type[RemoteError]] = {
    str(cls.kind): cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        NotFound,
        OutsideRoot,
        AuthenticationRequired,
        Forbidden,
        InvalidState,
        AlreadyExists,
        BudgetExceeded,
        VersionMismatch,
        PlanError,
        Conflict,
    )
}
_BY_CODE: dict[int, type[RemoteError]] = {}
for _cls in _BY_KIND.values():
    _BY_CODE.setdefault(int(_cls.code), _cls)


def error_from_object(error: object) -> RemoteError:
    """Rebuild the exception a backend meant from a JSON-RPC error member.

    The stable string code wins over the numeric one (it is finer-grained);
    unknown codes become a plain ``RemoteError`` that keeps the numbers.
    """
    if not isinstance(error, dict):
        return InternalError(f"malformed error object: {error!r:.200}")
    message = str(error.get("message", "unknown error"))
    raw_data = error.get("data")
    data: dict[str, Any] = dict(raw_data) if isinstance(raw_data, dict) else {}
    remedy = data.pop("remedy", None)
    kind = data.pop("code", None)
    cls = _BY_KIND.get(str(kind)) if kind is not None else None
    code = error.get("code")
    if cls is None and isinstance(code, int):
        cls = _BY_CODE.get(code)
    return (cls or RemoteError)(
        message, remedy=str(remedy) if remedy is not None else None, data=data
    )
