from __future__ import annotations

import json

import pytest

from acp_client import errors
from acp_client.errors import ErrorCode, error_from_object
from acp_client.events import (
    EVENT_TYPES,
    StreamReset,
    UnknownEvent,
    ValidationResultEvent,
    ValidationStarted,
    parse_event,
    read_event,
)
from acp_client.jsonrpc import request, success, unwrap
from acp_client.operations import (
    ALIASES,
    OPERATIONS,
    ValidationRunParams,
    alias_for,
    canonical_method,
    version_compatible,
)

DOMAIN_ERRORS = [
    (errors.NotFound, -32001, "NOT_FOUND"),
    (errors.AuthenticationRequired, -32002, "UNAUTHORIZED"),
    (errors.Forbidden, -32003, "FORBIDDEN"),
    (errors.InvalidState, -32004, "INVALID_STATE"),
    (errors.AlreadyExists, -32005, "ALREADY_EXISTS"),
    (errors.BudgetExceeded, -32006, "BUDGET_EXCEEDED"),
    (errors.VersionMismatch, -32007, "VERSION_MISMATCH"),
    (errors.PlanError, -32008, "PLAN_ERROR"),
    (errors.Conflict, -32010, "CONFLICT"),
    (errors.OutsideRoot, -32001, "OUTSIDE_ROOT"),
    (errors.MethodNotFound, -32601, "METHOD_NOT_FOUND"),
    (errors.InvalidParams, -32602, "INVALID_PARAMS"),
]


@pytest.mark.parametrize(("cls", "code", "kind"), DOMAIN_ERRORS)
def test_error_round_trips_through_its_error_object(
    cls: type[errors.RemoteError], code: int, kind: str
) -> None:
    original = cls("it went wrong", remedy="do this", data={"field": "x"})
    wire = original.to_error_object()
    assert wire["code"] == code
    assert wire["data"]["code"] == kind
    rebuilt = error_from_object(wire)
    assert type(rebuilt) is cls
    assert (rebuilt.message, rebuilt.remedy, rebuilt.data) == (
        "it went wrong",
        "do this",
        {"field": "x"},
    )


def test_outages_and_refusals_are_distinct_families() -> None:
    assert not issubclass(errors.BackendUnreachable, errors.RemoteError)
    assert not issubclass(errors.NotFound, errors.TransportError)
    # Authentication is its own family whichever way it arrives (HTTP 401 or -32002).
    assert issubclass(errors.AuthenticationRequired, errors.AuthenticationError)
    assert not issubclass(errors.AuthenticationError, errors.TransportError)


def test_a_business_error_mentioning_a_connection_is_not_an_outage() -> None:
    error = error_from_object(
        {"code": -32008, "message": "fix failed: connection refused by linter", "data": {}}
    )
    assert isinstance(error, errors.PlanError)
    assert not isinstance(error, errors.TransportError)


def test_unknown_and_malformed_error_objects() -> None:
    unknown = error_from_object({"code": -31999, "message": "new thing"})
    assert type(unknown) is errors.RemoteError
    assert isinstance(error_from_object("nonsense"), errors.InternalError)
    by_number = error_from_object({"code": -32004, "message": "busy"})
    assert isinstance(by_number, errors.InvalidState)


def test_unwrap_classifies_responses() -> None:
    assert unwrap(success(1, {"ok": True}), 1) == {"ok": True}
    with pytest.raises(errors.NotFound):
        unwrap({"jsonrpc": "2.0", "id": 1, "error": errors.NotFound("x").to_error_object()}, 1)
    for garbage in (
        "<html>",
        {"jsonrpc": "2.0", "id": 2, "result": 1},
        {"id": 1, "result": 1},
        {"jsonrpc": "2.0", "id": 1},
    ):
        with pytest.raises(errors.ServerFault):
            unwrap(garbage, 1)
    assert request(7, "resource.list", {})["id"] == 7


def test_events_round_trip_and_reject_garbage() -> None:
    event = ValidationStarted(
        event_id=3, at="2026-11-30T00:00:00Z", run_id="R", resource_id="S", validations=("ruff",)
    )
    parsed = parse_event(event.to_notification())
    assert parsed == event
    with pytest.raises(UnknownEvent):
        parse_event({"jsonrpc": "2.0", "method": "plan.exploded", "params": {}})
    with pytest.raises(errors.ServerFault):
        parse_event({"jsonrpc": "2.0", "method": "validation.started", "params": {"event_id": -1}})
    with pytest.raises(errors.ServerFault):
        parse_event(["not", "an", "event"])
    assert StreamReset.method in EVENT_TYPES


def test_an_event_read_in_one_pass_is_the_one_parsed_from_its_dict() -> None:
    result = {
        "id": "R1", "validation": "ruff", "mode": "required", "passed": False,
        "resource_id": "S", "run_id": "X", "started_at": "2026-11-30T00:00:00Z",
        "finished_at": "2026-11-30T00:00:01Z", "file_hashes": {"a.py": "0" * 64},
        "findings": [{"message": "m", "location": {"path": "a.py", "line": 3, "character": -2}}],
        "added_later": {"by": "a newer backend"},
    }  # fmt: skip
    texts = [
        json.dumps({"jsonrpc": "2.0", "method": "validation.result",
                    "params": {"event_id": 9, "at": "2026-11-30T00:00:02Z", "result": result}}),
        ValidationStarted(
            event_id=3, at="2026-11-30T00:00:00Z", run_id="X", resource_id="S", validations=("a",)
        ).to_notification(),
        {"jsonrpc": "2.0", "method": "stream.reset",
         "params": {"event_id": 4, "at": "2026-11-30T00:00:00Z", "reason": "gone"}},
    ]  # fmt: skip
    for text in texts:
        wire = text if isinstance(text, str) else json.dumps(text)
        typed = read_event(wire)
        assert typed is not None
        assert typed == parse_event(json.loads(wire))
        assert read_event(wire.encode()) == typed
    typed = read_event(texts[0])
    assert isinstance(typed, ValidationResultEvent)
    assert typed.result.findings[0].location is not None
    assert typed.result.findings[0].location.character == 0  # clamped, as from a dict


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[1, 2]",
        '{"jsonrpc": "2.0", "method": "plan.exploded", "params": {}}',
        '{"jsonrpc": "2.0", "method": "validation.started", "params": {"event_id": -1}}',
        '{"jsonrpc": "1.0", "method": "stream.reset",'
        ' "params": {"event_id": 4, "at": "2026-11-30T00:00:00Z", "reason": "r"}}',
    ],
)
def test_what_cannot_be_typed_in_one_pass_is_left_to_the_dict_path(text: str) -> None:
    assert read_event(text) is None


def test_params_refuse_unknown_fields_by_name() -> None:
    with pytest.raises(ValueError, match="validation"):
        ValidationRunParams.model_validate({"resource": "demo", "validation": ["ruff"]})


def test_aliases_point_at_real_operations() -> None:
    assert set(ALIASES.values()) <= set(OPERATIONS)
    assert canonical_method("_cleveragents/plan/apply") == "plan.apply"
    assert canonical_method("plan.apply") == "plan.apply"
    assert alias_for("resource.list") == "_cleveragents/registry/resources/list"
    assert alias_for("validation.list") is None


def test_version_compatibility_is_by_major() -> None:
    assert version_compatible("1.0", "1.4")
    assert not version_compatible("1.0", "2.0")
    assert ErrorCode.VERSION_MISMATCH == -32007
