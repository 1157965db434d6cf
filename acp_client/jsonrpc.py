"""JSON-RPC 2.0 framing shared by both transports and the backend's server."""

from __future__ import annotations

from typing import Any

from acp_client.errors import ServerFault, error_from_object

JsonObject = dict[str, Any]


def request(request_id: int | str, method: str, params: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def success(request_id: int | str | None, result: Any) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def failure(request_id: int | str | None, error: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def unwrap(response: object, request_id: int | str) -> Any:
    """The ``result`` of a response, or the exception its ``error`` means.

    Anything that is not a response to ``request_id`` is a ``ServerFault``:
    the peer is not speaking ACP, which is an outage, not a business error.
    """
    if not isinstance(response, dict) or response.get("jsonrpc") != "2.0":
        raise ServerFault(f"not a JSON-RPC 2.0 response: {response!r:.200}")
    if "error" in response and response.get("id") is None:
        # The peer could not read our id (a parse error, an oversized body).
        raise error_from_object(response["error"])
    if response.get("id") != request_id:
        raise ServerFault(f"response id {response.get('id')!r} does not match {request_id!r}")
    if "error" in response:
        raise error_from_object(response["error"])
    if "result" not in response:
        raise ServerFault("JSON-RPC response has neither result nor error")
    return response["result"]
