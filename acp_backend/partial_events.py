"""Partial results on the event stream, and whole ones for everyone else (ADR 0017).

A save that runs a ``{files}`` validation on the saved files stores the
merged result (every file's findings) but logs an event with only the
covered files' findings (``covered``, ``base_result_id``): what the event
costs grows with what the run checked, not with what it carried over. A
subscriber that asked for partial results gets that event as it is; any
other gets the stored merged result in its place, as before partial
results existed.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from acp_backend.store import Store
from acp_client.events import Event, ValidationResultEvent


async def whole_results(
    store: Store, events: AsyncGenerator[Event, None]
) -> AsyncGenerator[Event, None]:
    """``events`` with each partial result replaced by its stored whole."""
    async with contextlib.aclosing(events):
        async for event in events:
            if not isinstance(event, ValidationResultEvent) or event.covered is None:
                yield event
                continue
            whole = store.result(event.result.id)
            if whole is None:
                continue  # its resource was unregistered, its results with it
            yield event.model_copy(
                update={"result": whole, "covered": None, "base_result_id": None}
            )
