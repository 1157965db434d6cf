"""One logical event subscription over as many SSE connections as it takes.

Each connection resumes with ``Last-Event-ID``; events already delivered are
dropped; a ``stream.reset`` is passed through and moves the cursor. The
keep-alive watchdog is the stream's read timeout: the server writes at least
a comment every keep-alive interval, so no byte at all for
``silence_factor`` intervals means a dead connection, even one whose TCP
socket never closed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, SSEError, aconnect_sse

from acp_client.errors import AuthenticationError, ServerFault, StreamDropped, TransportError
from acp_client.events import Event, StreamReset, prepare_reading, read_event
from acp_client.transport.failures import check_status, classify
from acp_client.transport.policy import StreamPolicy

log = logging.getLogger(__name__)


class SseSubscription:
    """Iterate it for events, each once, in id order: typed, or a notification
    dict where this client cannot type it (``AcpClient.events`` says why)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        where: str,
        policy: StreamPolicy,
        after: int | None,
    ) -> None:
        self._http = http
        self._url = url
        self._where = where
        self._policy = policy
        self.last_id = after
        self.failures = 0
        self.connections = 0

    async def __aiter__(self) -> AsyncIterator[dict[str, Any] | Event]:
        while True:
            started = time.monotonic()
            delivered = False
            reason = "was closed by the server"
            try:
                async for message in self._connection():
                    delivered = True
                    yield message
            except AuthenticationError:
                raise
            except TransportError as exc:
                reason = f"failed: {exc.message}"
            if self.last_id is None:
                # Reconnecting "from now" would silently skip what happened meanwhile.
                raise StreamDropped(
                    f"event stream from {self._where} {reason} before its first event; "
                    "there is no position to resume from",
                    remedy="resync by listing, then subscribe again",
                )
            healthy = delivered or time.monotonic() - started >= self._policy.silence_timeout
            self.failures = 0 if healthy else self.failures + 1
            limit = self._policy.max_attempts
            if limit is not None and self.failures >= limit:
                raise StreamDropped(
                    f"event stream from {self._where} given up after {self.failures} "
                    f"attempts: it {reason}"
                )
            log.warning("event stream from %s %s; resuming", self._where, reason)
            await asyncio.sleep(self._policy.backoff(self.failures))

    async def _connection(self) -> AsyncIterator[dict[str, Any] | Event]:
        headers = {} if self.last_id is None else {"Last-Event-ID": str(self.last_id)}
        timeout = self._http.timeout
        watchdog = httpx.Timeout(
            connect=timeout.connect,
            read=self._policy.silence_timeout,
            write=timeout.write,
            pool=timeout.pool,
        )
        self.connections += 1
        try:
            async with aconnect_sse(
                self._http, "GET", self._url, headers=headers, timeout=watchdog
            ) as source:
                check_status(source.response, self._where)
                if source.response.status_code != 200:
                    raise ServerFault(
                        f"{self._where} answered HTTP {source.response.status_code} for events",
                        status=source.response.status_code,
                    )
                prepare_reading()  # while the stream is quiet, not at its first event
                async for sse in source.aiter_sse():
                    message = self._accept(sse)
                    if message is not None:
                        yield message
        except httpx.ReadTimeout as exc:
            raise StreamDropped(
                f"no data from {self._where} for {self._policy.silence_timeout:g} s"
            ) from exc
        except httpx.HTTPError as exc:
            raise classify(exc, self._where) from exc
        except SSEError as exc:
            raise ServerFault(f"{self._where} did not answer with an event stream") from exc

    def _accept(self, sse: ServerSentEvent) -> dict[str, Any] | Event | None:
        """The event in ``sse``, typed (``read_event``), or as the notification
        dict when it is not one this client can type (the client logs and
        skips that); ``None`` for a duplicate or junk."""
        if not sse.data:
            return None
        event = read_event(sse.data)
        if event is not None:
            return event if self._advance(event.event_id, isinstance(event, StreamReset)) else None
        try:
            message = json.loads(sse.data)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            log.warning("skipping an event from %s that is not a JSON object", self._where)
            return None
        params = message.get("params")
        event_id = params.get("event_id") if isinstance(params, dict) else None
        if not isinstance(event_id, int) or isinstance(event_id, bool):
            return message  # malformed: the client logs and skips it
        return message if self._advance(event_id, message.get("method") == "stream.reset") else None

    def _advance(self, event_id: int, is_reset: bool) -> bool:
        """Move the cursor to ``event_id``; False for an event already
        delivered (replayed after a reconnect). A reset moves it anywhere."""
        if not is_reset and self.last_id is not None and event_id <= self.last_id:
            return False
        self.last_id = event_id
        return True
