"""The backend suite: any ACP backend against the contract (docs/conformance.md).

Collected by the plugin for ``--acp-conformance=backend``. Each test is one
row of the conformance table; its docstring's first line says what it checks.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest

from acp_client.models import WORKING_PLAN_STATES
from acp_conformance import schema
from acp_conformance.kit import Kit
from acp_conformance.scratch import FIXABLE, PASSING, VALIDATIONS
from acp_conformance.wire import HttpWire, Message, collect, event_id

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
NOT_FOUND, INVALID_STATE, ALREADY_EXISTS, VERSION_MISMATCH, CONFLICT = (
    -32001,
    -32004,
    -32005,
    -32007,
    -32010,
)
MISSING = "01J0000000000000000ACPCONF0"  # an id no backend issued
NO_RESOURCE = "acp-conformance-no-such-resource"
UNKNOWN_FIELD = "acp_conformance_unknown_field"
ONE_LINE = "--- a/fixme.txt\n+++ b/fixme.txt\n@@ -1 +1 @@\n-broken\n+fixed\n"
PLAN_OPERATIONS = ("plan.execute", "plan.get", "plan.preview", "plan.apply")


@dataclass(frozen=True)
class Sample:
    """A call every backend can answer: its params, and the error code expected
    (``None``: a result)."""

    params: dict[str, Any]
    error: int | None = None


def samples(kit: Kit) -> dict[str, Sample]:
    resource = kit.scratch.id
    return {
        "acp.initialize": Sample({"client_name": "acp-conformance"}),
        "resource.list": Sample({}),
        "resource.register": Sample({"path": kit.backend_root}, ALREADY_EXISTS),
        "resource.unregister": Sample({"resource": NO_RESOURCE}, NOT_FOUND),
        "resource.resolve": Sample({"path": kit.path("sample.py")}),
        "validation.list": Sample({"resource": resource}),
        "validation.schema": Sample({"resource": resource}),
        "validation.run": Sample({"resource": resource, "validations": [PASSING]}),
        "validation.cancel": Sample({"run_id": MISSING}, NOT_FOUND),
        "validation.list_results": Sample({"resource": resource}),
        "plan.list": Sample({"resource": resource}),
        "plan.get": Sample({"plan_id": MISSING}, NOT_FOUND),
        "plan.execute": Sample({"resource": NO_RESOURCE, "validation": FIXABLE}, NOT_FOUND),
        "plan.create": Sample({"resource": NO_RESOURCE, "title": "t", "diff": ONE_LINE}, NOT_FOUND),
        "plan.preview": Sample({"plan_id": MISSING}, NOT_FOUND),
        "plan.apply": Sample({"plan_id": MISSING, "expected_hash": "sha256:0"}, NOT_FOUND),
        "plan.cancel": Sample({"plan_id": MISSING}, NOT_FOUND),
        "context.inspect": Sample({"path": kit.path("sample.py"), "line": 1, "character": 0}),
    }


def sample_of(kit: Kit, method: str) -> Sample:
    """The sample call of ``method``; a contract method newer than this kit skips."""
    sample = samples(kit).get(method)
    if sample is None:
        pytest.skip(f"this version of the kit has no sample call of {method}")
    return sample


def answer_problems(method: str, answer: Message, expected_error: int | None) -> list[str]:
    """How ``answer`` to ``method`` breaks the contract, given what was expected."""
    if answer.get("jsonrpc") != "2.0":
        return [f"not a JSON-RPC 2.0 response: {answer!r:.120}"]
    if expected_error is None:
        if "result" not in answer:
            return [f"{method} was refused: {answer.get('error')!r:.300}"]
        return schema.problems(answer["result"], schema.methods()[method]["result"])
    if "error" not in answer:
        return [f"{method} answered a result where error {expected_error} was due"]
    return schema.error_problems(answer["error"], expected_error)


def served(kit: Kit, method: str) -> None:
    if not kit.serves(method):
        pytest.skip(f"the backend does not serve {method} (not in acp.initialize's operations)")


def expect(found: list[str], what: str) -> None:
    assert not found, f"{what}: " + "; ".join(found[:4])


# --- acp.initialize and errors -------------------------------------------------


def test_initialize(kit: Kit) -> None:
    """acp.initialize answers the schema's shape, a 1.x version and its operations."""
    answer = kit.run(kit.wire.call("acp.initialize", {"client_name": "acp-conformance"}))
    expect(answer_problems("acp.initialize", answer, None), "acp.initialize")
    result = answer["result"]
    assert (
        str(result["protocol_version"]).split(".")[0]
        == schema.contract()["protocol_version"].split(".")[0]
    ), f"protocol_version {result['protocol_version']!r} is not a 1.x version"
    assert "acp.initialize" in result["operations"], "operations does not list acp.initialize"


def test_version_mismatch(kit: Kit) -> None:
    """A client of another major version is refused with VERSION_MISMATCH (-32007)."""
    answer = kit.run(kit.wire.call("acp.initialize", {"protocol_version": "99.0"}))
    expect(answer_problems("acp.initialize", answer, VERSION_MISMATCH), "protocol_version 99.0")


def test_unknown_method(kit: Kit) -> None:
    """An unknown method is METHOD_NOT_FOUND (-32601) with data.code."""
    answer = kit.run(kit.wire.call("acp.conformance_no_such_method", {}))
    expect(answer_problems("acp.conformance_no_such_method", answer, METHOD_NOT_FOUND), "unknown")


def test_not_found(kit: Kit) -> None:
    """An unknown resource is NOT_FOUND (-32001) with data.code."""
    served(kit, "validation.list")
    answer = kit.run(kit.wire.call("validation.list", {"resource": NO_RESOURCE}))
    expect(answer_problems("validation.list", answer, NOT_FOUND), "validation.list of no resource")


@pytest.mark.parametrize("method", sorted(schema.methods()))
def test_operation(kit: Kit, method: str) -> None:
    """The operation answers a sample call as the schema and error catalog say."""
    served(kit, method)
    sample = sample_of(kit, method)
    expect(schema.problems(sample.params, schema.methods()[method]["params"]), "kit's own sample")
    answer = kit.run(kit.wire.call(method, sample.params))
    expect(answer_problems(method, answer, sample.error), method)


@pytest.mark.parametrize("method", sorted(schema.methods()))
def test_invalid_params(kit: Kit, method: str) -> None:
    """An unknown parameter is INVALID_PARAMS (-32602) naming the field."""
    served(kit, method)
    params = {**sample_of(kit, method).params, UNKNOWN_FIELD: 1}
    answer = kit.run(kit.wire.call(method, params))
    expect(answer_problems(method, answer, INVALID_PARAMS), f"{method} with {UNKNOWN_FIELD}")
    assert UNKNOWN_FIELD in json.dumps(answer["error"]), "the error does not name the field"


@pytest.mark.parametrize("alias", sorted(schema.aliases()))
def test_alias(kit: Kit, alias: str) -> None:
    """The A2A name answers as the ACP operation it stands for."""
    method = schema.aliases()[alias]
    served(kit, method)
    sample = sample_of(kit, method)
    answer = kit.run(kit.wire.call(alias, sample.params))
    expect(answer_problems(method, answer, sample.error), f"{alias} (= {method})")


def test_validation_schema(kit: Kit) -> None:
    """validation.schema answers the schema's shape, with the mode field and a preset."""
    served(kit, "validation.schema")
    for params in ({}, {"resource": kit.scratch.id}):
        answer = kit.run(kit.wire.call("validation.schema", params))
        expect(answer_problems("validation.schema", answer, None), f"validation.schema {params}")
        result = answer["result"]
        fields = {field["name"]: field for field in result["fields"]}
        assert "mode" in fields, f"no mode field among {sorted(fields)}"
        assert {"required", "informational"} <= set(fields["mode"].get("values", ())), (
            f"mode's values are {fields['mode'].get('values')}"
        )
        assert result["presets"], "no preset listed"


# --- HTTP: authentication and framing -----------------------------------------


def test_rpc_needs_token(kit: Kit, http: HttpWire) -> None:
    """POST /acp/v1 without a token is HTTP 401."""
    response = kit.run(http.post(b'{"jsonrpc": "2.0", "id": 1, "method": "resource.list"}', None))
    assert response.status_code == 401, f"HTTP {response.status_code} without a token"


def test_rpc_refuses_wrong_token(kit: Kit, http: HttpWire) -> None:
    """POST /acp/v1 with a wrong token is HTTP 401."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "resource.list"}'
    response = kit.run(http.post(body, "acp-conformance-wrong-token"))
    assert response.status_code == 401, f"HTTP {response.status_code} with a wrong token"


def test_events_need_token(kit: Kit, http: HttpWire) -> None:
    """GET /acp/v1/events without a token is HTTP 401."""
    response = kit.run(http.get("/acp/v1/events", None))
    assert response.status_code == 401, f"HTTP {response.status_code} without a token"


def test_health_is_open(kit: Kit, http: HttpWire) -> None:
    """GET /health answers 200 without a token."""
    response = kit.run(http.get("/health", None))
    assert response.status_code == 200, f"/health answered HTTP {response.status_code}"


def test_parse_error(kit: Kit, http: HttpWire) -> None:
    """A body that is not JSON is PARSE_ERROR (-32700) with a null id."""
    answer = kit.run(http.post(b"{not json")).json()
    assert "id" in answer and answer["id"] is None, f"id {answer.get('id')!r}, expected null"
    expect(schema.error_problems(answer.get("error"), PARSE_ERROR), "a body that is not JSON")


def test_invalid_request(kit: Kit, http: HttpWire) -> None:
    """A JSON-RPC message without a method is INVALID_REQUEST (-32600)."""
    answer = kit.run(http.post(b'{"jsonrpc": "2.0", "id": 7}')).json()
    expect(schema.error_problems(answer.get("error"), INVALID_REQUEST), "a request without method")


# --- events ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_events(kit: Kit) -> tuple[str, list[Message]]:
    """One run of every scratch validation, with the events it produced."""
    served(kit, "validation.run")
    return kit.run(kit.run_validations())


def test_run_event_order(run_events: tuple[str, list[Message]]) -> None:
    """validation.run -> validation.started, one validation.result each, validation.completed."""
    run_id, events = run_events
    mine = [e for e in events if _run_of(e) == run_id]
    methods = [e["method"] for e in mine]
    assert methods[:1] == ["validation.started"], f"the run's first event is {methods[:1]}"
    assert methods[-1:] == ["validation.completed"], f"the run's last event is {methods[-1:]}"
    listed = mine[0]["params"].get("validations", [])
    results = sorted(e["params"]["result"]["validation"] for e in mine[1:-1])
    assert methods[1:-1] == ["validation.result"] * len(methods[1:-1]), methods
    assert results == sorted(listed) == sorted(VALIDATIONS), f"results {results}, ran {listed}"


def test_event_ids_increase(run_events: tuple[str, list[Message]]) -> None:
    """Event ids are integers that only grow."""
    ids = [event_id(e) for e in run_events[1]]
    numbers = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]
    assert numbers == ids, f"event ids that are not integers: {ids}"
    assert numbers == sorted(set(numbers)), f"event ids not strictly increasing: {ids}"


def test_event_shapes(run_events: tuple[str, list[Message]]) -> None:
    """Every event is a notification whose params match the schema."""
    found: list[str] = []
    for event in run_events[1]:
        ref = schema.event_ref(str(event.get("method")))
        if ref is None:
            continue  # a newer backend's event: clients skip those
        found += [f"{event['method']} {p}" for p in schema.problems(event.get("params"), ref)]
    expect(found, "events")


def test_sse_framing(kit: Kit, http: HttpWire, run_events: tuple[str, list[Message]]) -> None:
    """SSE: text/event-stream; each frame's id: is its event id, data: one notification."""
    assert run_events[1], "no events to check"
    types = {t.split(";")[0].strip() for t in http.content_types}
    assert types == {"text/event-stream"}, f"content types {types}"
    expect(http.framing, "SSE frames")


def test_resume_without_gap_or_duplicate(kit: Kit, run_events: tuple[str, list[Message]]) -> None:
    """Resuming after an event id (Last-Event-ID) replays exactly the events after it."""
    ids = [event_id(e) for e in run_events[1]]
    middle = len(ids) // 2
    after, expected = ids[middle], ids[middle + 1 :]
    assert isinstance(after, int)
    replayed = kit.run(
        collect(kit.wire, after, lambda seen: len(seen) >= len(expected), kit.options.timeout)
    )
    got = [event_id(e) for e in replayed]
    assert got == expected, f"after {after}: expected {expected}, got {got}"


def test_stream_reset_unknown_position(kit: Kit, run_events: tuple[str, list[Message]]) -> None:
    """Asked to resume after an id the log never had, the stream starts with stream.reset."""
    newest = max(i for i in (event_id(e) for e in run_events[1]) if isinstance(i, int))
    first = kit.run(collect(kit.wire, newest + 1000, lambda seen: True, kit.options.timeout))
    assert first, f"nothing came after Last-Event-ID {newest + 1000}: expected stream.reset"
    _check_reset(first[0])
    assert first[0]["params"]["event_id"] < newest + 1000, "stream.reset continues after the id"


def test_stream_reset_when_trimmed(kit: Kit, run_events: tuple[str, list[Message]]) -> None:
    """Resuming from before the retained log starts with stream.reset, then no gap."""
    seen = kit.run(collect(kit.wire, 0, lambda seen: len(seen) >= 2, kit.options.timeout))
    if not seen:
        pytest.skip("the event log is empty")
    first = seen[0]
    if first.get("method") != "stream.reset":
        if event_id(first) == 1:
            pytest.skip(
                "the backend still retains event 1; run it with a small retention "
                "(e.g. ACP_EVENT_RETENTION=5 for acp-backend) to check this"
            )
        raise AssertionError(f"event {event_id(first)} came first after 0 without stream.reset")
    _check_reset(first)
    if len(seen) > 1:
        cont = first["params"]["event_id"]
        assert event_id(seen[1]) == cont + 1, f"after reset to {cont} came {event_id(seen[1])}"


def _check_reset(message: Message) -> None:
    assert message.get("method") == "stream.reset", f"first event is {message.get('method')}"
    ref = schema.event_ref("stream.reset")
    assert ref is not None
    expect(schema.problems(message.get("params"), ref), "stream.reset")


def _run_of(event: Message) -> object:
    params = event.get("params") or {}
    if event.get("method") == "validation.result":
        return (params.get("result") or {}).get("run_id")
    return params.get("run_id")


# --- results --------------------------------------------------------------------


def test_pagination(kit: Kit, run_events: tuple[str, list[Message]]) -> None:
    """validation.list_results pages with next_cursor: every result once, none lost."""
    served(kit, "validation.list_results")
    base = {"resource": kit.scratch.id, "history": True}
    everything = kit.run(kit.result("validation.list_results", {**base, "limit": 1000}))
    all_ids = [r["id"] for r in everything["results"]]
    assert len(all_ids) >= 3, f"only {len(all_ids)} results after a run of {len(VALIDATIONS)}"
    paged: list[str] = []
    cursor: str | None = None
    for _ in range(len(all_ids) + 2):
        params = {**base, "limit": 2} | ({"after": cursor} if cursor else {})
        page = kit.run(kit.result("validation.list_results", params))
        assert len(page["results"]) <= 2, f"a page of limit 2 held {len(page['results'])}"
        paged += [r["id"] for r in page["results"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert not cursor, "next_cursor never ended"
    assert len(paged) == len(set(paged)), "a result came on two pages"
    assert paged == all_ids, "the pages do not add up to the whole listing, in order"


def test_pagination_limit_checked(kit: Kit) -> None:
    """limit 0 is INVALID_PARAMS (-32602)."""
    served(kit, "validation.list_results")
    params = {"resource": kit.scratch.id, "limit": 0}
    answer = kit.run(kit.wire.call("validation.list_results", params))
    expect(answer_problems("validation.list_results", answer, INVALID_PARAMS), "limit 0")


# --- plans ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fix_plan(kit: Kit) -> dict[str, Any]:
    """conf-fixable's proposed fix, once it has left queued/processing."""
    missing = [m for m in PLAN_OPERATIONS if not kit.serves(m)]
    if missing:
        pytest.skip(f"the backend does not serve {', '.join(missing)}")
    params = {"resource": kit.scratch.id, "validation": FIXABLE, "paths": ["fixme.txt"]}
    plan: dict[str, Any] = kit.run(kit.result("plan.execute", params))
    return kit.run(_settled(kit, plan))


async def _settled(kit: Kit, plan: dict[str, Any]) -> dict[str, Any]:
    async with asyncio.timeout(kit.options.timeout):
        while plan["state"] in WORKING_PLAN_STATES:
            await asyncio.sleep(0.1)
            plan = await kit.result("plan.get", {"plan_id": plan["id"]})
    return plan


def test_plan_execute(fix_plan: dict[str, Any]) -> None:
    """plan.execute of a validation's fix gives a complete plan on its paths."""
    assert fix_plan["state"] == "complete", f"plan is {fix_plan['state']}: {fix_plan.get('error')}"


def preview_hash(preview: dict[str, Any]) -> str:
    """The guard hash of a plan.preview result, by the name the schema gives it."""
    properties = schema.contract()["$defs"]["PlanPreview"]["properties"]
    return str(preview[next(name for name in properties if name.endswith("hash"))])


def test_plan_preview(kit: Kit, fix_plan: dict[str, Any]) -> None:
    """plan.preview gives the change set and a hash."""
    preview = kit.run(kit.result("plan.preview", {"plan_id": fix_plan["id"]}))
    paths = [c["path"] for c in preview["changes"]]
    assert paths == ["fixme.txt"], f"changes {paths}, expected fixme.txt"
    assert preview_hash(preview), "empty hash"


def test_plan_apply_wrong_hash(kit: Kit, fix_plan: dict[str, Any]) -> None:
    """plan.apply with a hash that is not the preview's is CONFLICT (-32010)."""
    params = {"plan_id": fix_plan["id"], "expected_hash": "sha256:" + "0" * 64}
    answer = kit.run(kit.wire.call("plan.apply", params))
    expect(answer_problems("plan.apply", answer, CONFLICT), "plan.apply with a wrong hash")


def test_plan_apply_after_file_moved(kit: Kit, fix_plan: dict[str, Any]) -> None:
    """plan.apply is CONFLICT (-32010) when a file changed since the preview."""
    root = kit.scratch.root
    if root is None:
        pytest.skip("the scratch resource's files are not on this machine")
    preview = kit.run(kit.result("plan.preview", {"plan_id": fix_plan["id"]}))
    target = root / "fixme.txt"
    before = target.read_text("utf-8")
    target.write_text(before + "moved meanwhile\n", "utf-8")
    try:
        params = {"plan_id": fix_plan["id"], "expected_hash": preview_hash(preview)}
        answer = kit.run(kit.wire.call("plan.apply", params))
    finally:
        target.write_text(before, "utf-8")
    expect(answer_problems("plan.apply", answer, CONFLICT), "plan.apply after the file moved")


def test_plan_apply(kit: Kit, fix_plan: dict[str, Any]) -> None:
    """plan.apply with the preview's hash applies the plan (state applied)."""
    preview = kit.run(kit.result("plan.preview", {"plan_id": fix_plan["id"]}))
    params = {"plan_id": fix_plan["id"], "expected_hash": preview_hash(preview)}
    applied = kit.run(kit.result("plan.apply", params))
    assert applied["state"] == "applied", f"state {applied['state']} after plan.apply"
    root = kit.scratch.root
    if root is not None:
        text = (root / "fixme.txt").read_text("utf-8")
        (root / "fixme.txt").write_text(text.replace("fixed", "broken"), "utf-8")  # next run
        assert "fixed" in text, f"fixme.txt after apply: {text!r}"


def test_plan_cancel_applied(kit: Kit, fix_plan: dict[str, Any]) -> None:
    """plan.cancel of an applied plan is INVALID_STATE (-32004)."""
    served(kit, "plan.cancel")
    plan = kit.run(kit.result("plan.get", {"plan_id": fix_plan["id"]}))
    if plan["state"] != "applied":
        pytest.skip(f"the plan is {plan['state']}, not applied (see plan_apply)")
    answer = kit.run(kit.wire.call("plan.cancel", {"plan_id": fix_plan["id"]}))
    expect(answer_problems("plan.cancel", answer, INVALID_STATE), "plan.cancel after apply")
