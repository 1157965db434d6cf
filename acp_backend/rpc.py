"""JSON-RPC 2.0 processing over a facade, independent of HTTP.

``handle_body`` takes the raw request body and returns what to send back:
a response object, a list of them (batch), or ``None`` when every message
was a notification. Every failure becomes a JSON-RPC error object; no
traceback ever leaves this module.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from acp_client import jsonrpc
from acp_client.errors import InternalError, InvalidParams, InvalidRequest, ParseError, RemoteError
from acp_client.transport import Facade

log = logging.getLogger(__name__)

Reply = dict[str, Any] | list[dict[str, Any]] | None


async def handle_body(facade: Facade, body: bytes) -> Reply:
    """Decode ``body`` and answer every request in it."""
    try:
        payload = json.loads(body)
    except ValueError as exc:  # bad UTF-8 or JSON, or an integer too long to convert
        return jsonrpc.failure(None, ParseError(f"malformed JSON: {exc}").to_error_object())
    except RecursionError:
        return jsonrpc.failure(None, ParseError("JSON nested too deeply").to_error_object())
    if isinstance(payload, list):
        if not payload:
            return _invalid(None, "empty batch")
        replies = [await handle_message(facade, message) for message in payload]
        answered = [reply for reply in replies if reply is not None]
        return answered or None
    return await handle_message(facade, payload)


async def handle_message(facade: Facade, message: object) -> dict[str, Any] | None:
    """Answer one request; ``None`` for a notification (no ``id`` member)."""
    if not isinstance(message, dict):
        return _invalid(None, f"a request must be an object, got {type(message).__name__}")
    request_id = message.get("id")
    # Fractional ids are discouraged by the spec and JSON booleans are not numbers.
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        return _invalid(None, "id must be a string, an integer or null")
    if message.get("jsonrpc") != "2.0":
        return _invalid(request_id, 'jsonrpc must be "2.0"')
    method = message.get("method")
    if not isinstance(method, str) or not method:
        return _invalid(request_id, "method must be a non-empty string")
    params = message.get("params", {})
    is_notification = "id" not in message
    if not isinstance(params, dict):
        error: RemoteError = InvalidParams("params must be an object (named parameters)")
        return None if is_notification else jsonrpc.failure(request_id, error.to_error_object())
    try:
        result = await facade.dispatch(method, params)
    except RemoteError as exc:
        reply = jsonrpc.failure(request_id, exc.to_error_object())
    except Exception:
        log.exception("%s failed", method)
        reply = jsonrpc.failure(
            request_id, InternalError(f"{method} failed inside the backend").to_error_object()
        )
    else:
        reply = jsonrpc.success(request_id, result)
    return None if is_notification else reply


def _invalid(request_id: str | int | None, why: str) -> dict[str, Any]:
    return jsonrpc.failure(request_id, InvalidRequest(f"invalid request: {why}").to_error_object())
