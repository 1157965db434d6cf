"""An SSE frame carries an event without its default fields, and a client
reads it back whole."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from acp_backend.event_stream import _sse_frame
from acp_client.events import ValidationResultEvent, parse_event
from acp_client.models import Finding, Location, ValidationMode, ValidationResult

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def test_a_frame_leaves_out_defaults_and_reads_back_whole() -> None:
    findings = tuple(
        Finding(location=Location(path="a.py", line=n, character=0), message=f"m{n}")
        for n in range(3)
    )
    result = ValidationResult(
        id="R1", validation="ruff", mode=ValidationMode.REQUIRED, passed=False,
        resource_id="res", run_id="run", started_at=NOW, finished_at=NOW, findings=findings,
    )  # fmt: skip
    event = ValidationResultEvent(event_id=7, at=NOW, result=result)
    frame = _sse_frame(event)
    head, data = frame.split("\n", 1)
    assert head == "id: 7" and frame.endswith("\n\n")
    assert "null" not in data and "help_uri" not in data and "fixes" not in data
    assert parse_event(json.loads(data.removeprefix("data: "))) == event
