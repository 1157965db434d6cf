"""``POST /acp/v1``, ``GET /health`` and the token, over real HTTP."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import LiveServer

from acp_backend.http_server import MAX_BODY_BYTES


@pytest.fixture
async def http(live_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {live_server.token}"}
    async with httpx.AsyncClient(base_url=live_server.url, headers=headers, timeout=30) as client:
        yield client


async def rpc(http: httpx.AsyncClient, payload: Any) -> Any:
    response = await http.post("/acp/v1", json=payload)
    assert response.status_code == 200, response.text
    return response.json()


async def post_raw(http: httpx.AsyncClient, content: Any, status: int) -> Any:
    """POST a body as it is (not JSON-encoded by us); the reply's JSON."""
    response = await http.post(
        "/acp/v1", content=content, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == status, response.text
    return response.json()


def call(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


async def test_health_needs_no_token_and_reveals_nothing(live_server: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=30) as anonymous:
        response = await anonymous.get(f"{live_server.url}/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", "Basic abc", "Bearer"])
async def test_a_missing_or_wrong_token_gets_401_and_nothing_happens(
    live_server: LiveServer, http: httpx.AsyncClient, tmp_path: Path, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    project = tmp_path / "project"
    project.mkdir()
    async with httpx.AsyncClient(base_url=live_server.url, headers=headers, timeout=30) as other:
        refused = await other.post(
            "/acp/v1", json=call("resource.register", {"path": str(project)})
        )
        events = await other.get("/acp/v1/events")
        elsewhere = await other.get("/no/such/path")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    assert events.status_code == 401
    assert elsewhere.status_code == 401  # refused before routing: nothing is revealed
    listing = await rpc(http, call("resource.list", {}))
    assert listing["result"] == {"resources": []}


async def test_the_right_token_is_served(http: httpx.AsyncClient, tmp_path: Path) -> None:
    reply = await rpc(http, call("resource.register", {"path": str(tmp_path), "name": "p"}))
    assert reply["id"] == 1
    assert reply["result"]["name"] == "p"


async def test_unknown_method_is_32601(http: httpx.AsyncClient) -> None:
    reply = await rpc(http, call("no.such.method", {}, request_id="abc"))
    assert reply["id"] == "abc"
    assert reply["error"]["code"] == -32601
    assert reply["error"]["data"]["code"] == "METHOD_NOT_FOUND"


async def test_bad_params_are_32602_naming_the_field(http: httpx.AsyncClient) -> None:
    reply = await rpc(http, call("resource.register", {"path": 42}))
    assert reply["error"]["code"] == -32602
    assert "params.path" in reply["error"]["message"]
    positional = await rpc(http, call("resource.list", ["positional"]))
    assert positional["error"]["code"] == -32602


async def test_malformed_json_is_32700(http: httpx.AsyncClient) -> None:
    for body in (b'{"jsonrpc": "2.0", "method"', b"\xff\xfe not utf-8", b"[" * 200_000):
        reply = await post_raw(http, body, 200)
        assert reply["id"] is None
        assert reply["error"]["code"] == -32700
        assert reply["error"]["data"]["code"] == "PARSE_ERROR"


@pytest.mark.parametrize(
    ("payload", "reply_id"),
    [
        ({"id": 1, "method": "resource.list"}, 1),
        ({"jsonrpc": "1.0", "id": 2, "method": "resource.list"}, 2),
        ({"jsonrpc": "2.0", "id": 3, "method": 7}, 3),
        ({"jsonrpc": "2.0", "id": 4}, 4),
        ({"jsonrpc": "2.0", "id": True, "method": "resource.list"}, None),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "resource.list"}, None),
        ("just a string", None),
        (17, None),
        ([], None),
    ],
)
async def test_wrong_shapes_are_32600(http: httpx.AsyncClient, payload: Any, reply_id: Any) -> None:
    reply = await rpc(http, payload)
    assert reply["id"] == reply_id
    assert reply["error"]["code"] == -32600
    assert reply["error"]["data"]["code"] == "INVALID_REQUEST"


async def test_a_batch_answers_each_request_and_skips_notifications(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    batch = [
        call("resource.list", {}, request_id=1),
        {"jsonrpc": "2.0", "method": "resource.register", "params": {"path": str(tmp_path)}},
        call("nope", {}, request_id=2),
        "garbage",
        call("resource.list", {}, request_id=3),
    ]
    replies = await rpc(http, batch)
    assert [reply.get("id") for reply in replies] == [1, 2, None, 3]
    assert replies[0]["result"] == {"resources": []}
    assert replies[1]["error"]["code"] == -32601
    assert replies[2]["error"]["code"] == -32600
    # The notification ran (in order) even though it got no answer.
    assert [r["name"] for r in replies[3]["result"]["resources"]] == [tmp_path.name]


async def test_notifications_alone_get_no_content(http: httpx.AsyncClient, tmp_path: Path) -> None:
    note = {"jsonrpc": "2.0", "method": "resource.register", "params": {"path": str(tmp_path)}}
    for payload in (note, [note, {**note, "method": "no.such.method"}]):
        response = await http.post("/acp/v1", json=payload)
        assert response.status_code == 204
        assert response.content == b""


async def test_an_oversized_body_is_413_with_a_jsonrpc_error_and_the_server_goes_on(
    http: httpx.AsyncClient,
) -> None:
    huge = json.dumps(call("resource.list", {"pad": "x" * MAX_BODY_BYTES})).encode()

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the cap must hold anyway
        for start in range(0, len(huge), 65536):
            yield huge[start : start + 65536]

    for content in (huge, chunks()):
        reply = await post_raw(http, content, 413)
        assert reply["id"] is None
        assert reply["error"]["code"] == -32600
        assert str(MAX_BODY_BYTES) in reply["error"]["message"]
    assert (await rpc(http, call("resource.list", {})))["result"] == {"resources": []}


async def test_a_bad_last_event_id_is_refused(http: httpx.AsyncClient) -> None:
    response = await http.get("/acp/v1/events", headers={"Last-Event-ID": "-3; drop"})
    assert response.status_code == 400
    assert "Last-Event-ID" in response.json()["error"]


async def read_frames(response: httpx.Response, count: int) -> list[list[str]]:
    """The first ``count`` SSE frames (comment frames included), as their lines."""
    frames: list[list[str]] = []
    current: list[str] = []
    async for line in response.aiter_lines():
        if line:
            current.append(line)
            continue
        frames.append(current)
        current = []
        if len(frames) == count:
            break
    return frames


async def test_the_event_stream_frames_ids_and_keeps_alive(
    make_server: Any, tmp_path: Path
) -> None:
    server: LiveServer = make_server(keepalive=0.2)
    headers = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as http:
        for name in ("a", "b", "c"):
            (tmp_path / name).mkdir()
            await rpc(http, call("resource.register", {"path": str(tmp_path / name)}))
        async with http.stream("GET", "/acp/v1/events", headers={"Last-Event-ID": "1"}) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            frames = await read_frames(stream, 4)
    assert frames[0] == [": connected"]
    events = [frame for frame in frames if not frame[0].startswith(":")]
    assert [frame[0] for frame in events] == ["id: 2", "id: 3"]
    for frame, event_id in zip(events, (2, 3), strict=True):
        message = json.loads(frame[1].removeprefix("data: "))
        assert message["method"] == "resource.changed"
        assert message["params"]["event_id"] == event_id
    assert frames[3] == [": keep-alive"]


async def test_round_trips_are_not_held_back_by_delayed_acks(http: httpx.AsyncClient) -> None:
    # Without TCP_NODELAY on accepted connections each answer waits ~40 ms.
    timings = []
    for _ in range(15):
        started = time.perf_counter()
        await rpc(http, call("resource.list", {}))
        timings.append(time.perf_counter() - started)
    assert statistics.median(timings) < 0.025
