"""Counting the SSE frames the server encodes (ADR 0028: once per event)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_backend import event_stream


def counting_encodings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The event id of every frame the server encodes from now on, in order."""
    encoded: list[int] = []
    encode = event_stream._sse_frame

    def counted(message: Any, *rest: Any) -> str:
        encoded.append(message.event_id)
        return encode(message, *rest)

    monkeypatch.setattr(event_stream, "_sse_frame", counted)
    return encoded
