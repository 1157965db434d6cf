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
import json
from collections.abc import AsyncGenerator
from typing import Any

from acp_backend.store import Store

Message = dict[str, Any]


async def whole_results(
    store: Store, messages: AsyncGenerator[Message, None]
) -> AsyncGenerator[Message, None]:
    """``messages`` with each partial result replaced by its stored whole."""
    async with contextlib.aclosing(messages):
        async for message in messages:
            params = message["params"]
            if message["method"] != "validation.result" or params.get("covered") is None:
                yield message
                continue
            rows = store.query(
                "SELECT body FROM validation_results WHERE id = ?", (params["result"]["id"],)
            )
            if not rows:
                continue  # its resource was unregistered, its results with it
            whole = {key: value for key, value in params.items() if key not in _PARTIAL}
            yield {**message, "params": {**whole, "result": json.loads(rows[0]["body"])}}


_PARTIAL = ("covered", "base_result_id")
