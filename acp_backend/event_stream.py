"""The SSE side of the HTTP server: a facade subscription as SSE frames.

Each event is ``id: <event_id>`` plus ``data: <JSON-RPC notification>``, so
a client's ``Last-Event-ID`` resumes right after it; a comment line goes out
whenever nothing else did for a keep-alive interval, which is what lets a
client tell a quiet stream from a dead one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from acp_client.events import Event
from acp_client.transport import Facade, subscribe

log = logging.getLogger(__name__)

# Events buffered per SSE client before the subscription waits for it.
STREAM_BUFFER = 256


async def sse_frames(
    facade: Facade,
    after: int | None,
    keepalive: float,
    closing: asyncio.Event,
    partial: bool = False,
) -> AsyncIterator[str]:
    """SSE frames for the facade's events, with keep-alive comments in between.

    A pump task feeds a queue so that waiting for the next event can time
    out (for a keep-alive) without cancelling the facade's iterator.
    """
    queue: asyncio.Queue[dict[str, Any] | Event | None] = asyncio.Queue(STREAM_BUFFER)
    stream = subscribe(facade, after, partial)

    async def pump() -> None:
        try:
            async for message in stream:
                await queue.put(message)
        except Exception:
            log.exception("event subscription failed")
        await queue.put(None)  # the end (not reached when cancelled)

    pump_task = asyncio.create_task(pump())
    closing_task = asyncio.create_task(closing.wait())
    getter: asyncio.Task[dict[str, Any] | Event | None] | None = None
    try:
        yield ": connected\n\n"
        while True:
            # The same pending get survives keep-alives: no event can be lost
            # between a timed-out wait and a new one.
            getter = getter or asyncio.create_task(queue.get())
            done, _ = await asyncio.wait(
                {getter, closing_task}, timeout=keepalive, return_when=asyncio.FIRST_COMPLETED
            )
            if getter in done:
                message, getter = getter.result(), None
                if message is None:
                    return
                yield _sse_frame(message)
            elif closing_task in done:
                return
            else:
                yield ": keep-alive\n\n"
    finally:
        tasks = [task for task in (pump_task, closing_task, getter) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _sse_frame(message: dict[str, Any] | Event) -> str:
    if isinstance(message, Event):  # pydantic writes the JSON: no dict in between
        params_json = message.model_dump_json(exclude_defaults=True)  # optional fields: schema
        data = f'{{"jsonrpc":"2.0","method":{json.dumps(message.method)},"params":{params_json}}}'
        return f"id: {message.event_id}\ndata: {data}\n\n"
    params = message.get("params")
    event_id = params.get("event_id") if isinstance(params, dict) else None
    data = json.dumps(message, separators=(",", ":"))
    return f"id: {event_id}\ndata: {data}\n\n" if event_id is not None else f"data: {data}\n\n"
