"""An SSE frame carries an event without its default fields, and a client
reads it back whole."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from acp_backend.event_stream import _sse_frame
from acp_backend.store import result_body
from acp_client.events import ValidationResultEvent, parse_event
from acp_client.models import Finding, Location, ValidationMode, ValidationResult

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def result_event(findings: int = 3) -> ValidationResultEvent:
    result = ValidationResult(
        id="R1", validation="ruff", mode=ValidationMode.REQUIRED, passed=False,
        resource_id="res", run_id="run", started_at=NOW, finished_at=NOW,
        findings=tuple(
            Finding(location=Location(path="a.py", line=n, character=0), message=f"m{n}")
            for n in range(findings)
        ),
    )  # fmt: skip
    return ValidationResultEvent(event_id=7, at=NOW, result=result)


def data(frame: str) -> dict[str, object]:
    return json.loads(frame.split("\ndata: ", 1)[1])  # type: ignore[no-any-return]


def test_a_frame_leaves_out_defaults_and_reads_back_whole() -> None:
    event = result_event()
    frame = _sse_frame(event)
    head, data = frame.split("\n", 1)
    assert head == "id: 7" and frame.endswith("\n\n")
    assert "null" not in data and "help_uri" not in data and "fixes" not in data
    assert parse_event(json.loads(data.removeprefix("data: "))) == event


def test_a_result_the_backend_stored_goes_out_as_the_json_it_stored() -> None:
    event = result_event(findings=1200)  # more than one store batch of findings
    plain = data(_sse_frame(event))
    body = result_body(event.result)
    # Marked, to tell the stored text from the result written again.
    stored = body.replace('"validation":"ruff"', '"validation":"as stored"', 1)

    def stored_json(result: ValidationResult) -> str | None:
        return stored if result is event.result else None

    sent = data(_sse_frame(event, stored_json))
    assert sent["params"]["result"]["validation"] == "as stored"  # type: ignore[index]
    sent["params"]["result"]["validation"] = "ruff"  # type: ignore[index]
    assert sent == plain  # otherwise the same notification
    # Another object, even an equal one, is written as before.
    copy = event.model_copy(update={"result": event.result.model_copy()})
    assert data(_sse_frame(copy, stored_json)) == plain
