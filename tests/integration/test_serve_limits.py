"""``serve`` under hostile peers: silent and slow connections time out, a
request's head past its cap is refused, a flood of half-open connections
cannot starve ``/health``, and numbers too long to convert are a JSON-RPC
error or a 400, never an HTTP 500."""

from __future__ import annotations

import contextlib
import json
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import LiveServer

from acp_backend.http_guard import MAX_HEAD_BYTES
from acp_backend.http_server import MAX_BODY_BYTES
from acp_client.discovery import read_backend_file
from acp_client.head_start import BACKEND_FILE

HEADER_TIMEOUT = 0.5
FLOOD = 1_100
WAIT = 30.0


@pytest.fixture
def guarded(make_server: Any) -> LiveServer:
    server: LiveServer = make_server(header_timeout=HEADER_TIMEOUT)
    return server


def closed_within(sock: socket.socket, seconds: float) -> float:
    """How long until the server closes ``sock`` (fails past ``seconds``)."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def test_a_silent_connection_is_closed_after_the_header_timeout(guarded: LiveServer) -> None:
    with socket.create_connection(("127.0.0.1", guarded.port)) as silent:
        assert closed_within(silent, 10 * HEADER_TIMEOUT) >= HEADER_TIMEOUT * 0.9


def test_headers_trickled_a_byte_at_a_time_are_cut_off(guarded: LiveServer) -> None:
    with socket.create_connection(("127.0.0.1", guarded.port)) as slow:
        started = time.monotonic()
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        with pytest.raises(OSError):  # reset or broken pipe once the server gave up
            for _ in range(int(20 * HEADER_TIMEOUT / 0.05)):
                slow.sendall(b"X")
                time.sleep(0.05)
                if slow.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                    raise ConnectionResetError
        assert time.monotonic() - started < 10 * HEADER_TIMEOUT


def test_headers_past_the_cap_are_a_431_and_a_large_body_is_not(live_server: LiveServer) -> None:
    # Sent fast, so that the header timeout is not what stops it.
    with socket.create_connection(("127.0.0.1", live_server.port)) as flooding:
        flooding.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        filler = b"X-Filler: " + b"a" * 1000 + b"\r\n"
        with contextlib.suppress(OSError):  # the server may close while this still sends
            for _ in range(2 * MAX_HEAD_BYTES // len(filler)):
                flooding.sendall(filler)
        assert flooding.recv(4096).startswith(b"HTTP/1.1 431 ")
        assert closed_within(flooding, WAIT) < WAIT
    # The cap is on the head alone: a body many times its size, sent in one
    # go with its headers, is read as before.
    padding = "x" * (4 * MAX_HEAD_BYTES)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "resource.list", "params": {"pad": padding}}
    )
    headers = {"Authorization": f"Bearer {live_server.token}", "Content-Type": "application/json"}
    response = httpx.post(f"{live_server.url}/acp/v1", content=body, headers=headers)
    assert response.status_code == 200 and "jsonrpc" in response.json()
    assert httpx.get(f"{live_server.url}/health").status_code == 200


def test_a_body_refused_by_its_length_is_read_to_its_end_not_taken_for_a_head(
    live_server: LiveServer,
) -> None:
    # The 413 goes out as the headers arrive; the body the client then still
    # sends (many times the head cap) is the refused request's, its last
    # 100 kB in one go (read with the body's end), and the connection serves
    # the next request once it is in.
    body = b"x" * (MAX_BODY_BYTES + 1)
    tail = 100_000
    with socket.create_connection(("127.0.0.1", live_server.port)) as client:
        client.settimeout(WAIT)
        client.sendall(
            b"POST /acp/v1 HTTP/1.1\r\nHost: x\r\n"
            + f"Authorization: Bearer {live_server.token}\r\n".encode()
            + f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        )
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += client.recv(4096)
        assert answer.startswith(b"HTTP/1.1 413 "), answer
        head, _, rest = answer.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        while len(rest) < length:
            rest += client.recv(4096)
        for start in range(0, len(body) - tail, 16384):
            client.sendall(body[start : min(start + 16384, len(body) - tail)])
        time.sleep(0.2)
        client.sendall(body[-tail:])
        client.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert client.recv(4096).startswith(b"HTTP/1.1 200 ")


def test_an_http_1_0_event_stream_is_refused_plainly(live_server: LiveServer) -> None:
    # HTTP/1.0 has no chunks and a stream has no length: a 505 that says so,
    # not a body in a framing the client cannot read. Other routes serve it.
    with socket.create_connection(("127.0.0.1", live_server.port)) as old:
        token = live_server.token
        old.sendall(
            f"GET /acp/v1/events HTTP/1.0\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
        )
        answer = b""
        while chunk := old.recv(4096):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 505 ") and b"chunked" not in head.lower()
    assert "HTTP/1.1" in json.loads(body)["error"]
    with socket.create_connection(("127.0.0.1", live_server.port)) as old:
        old.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        assert old.recv(4096).startswith(b"HTTP/1.1 200 ")


def test_an_idle_keep_alive_connection_is_closed_and_a_busy_one_is_not(
    guarded: LiveServer,
) -> None:
    with socket.create_connection(("127.0.0.1", guarded.port)) as idle:
        idle.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b"200 OK" in idle.recv(4096)
        assert closed_within(idle, 10 * HEADER_TIMEOUT) < 10 * HEADER_TIMEOUT
    # An event stream sends no request for much longer than the timeout.
    headers = {"Authorization": f"Bearer {guarded.token}"}
    with (
        httpx.Client(base_url=guarded.url, headers=headers, timeout=WAIT) as http,
        http.stream("GET", "/acp/v1/events") as stream,
    ):
        lines = stream.iter_lines()
        assert next(lines) == ": connected"
        time.sleep(3 * HEADER_TIMEOUT)
        http.post("/acp/v1", json={"jsonrpc": "2.0", "id": 1, "method": "resource.list"})
        assert stream.is_closed is False


@pytest.mark.parametrize("digits", [5_000, 100_000])
def test_a_huge_jsonrpc_id_is_a_parse_error_not_a_500(live_server: LiveServer, digits: int) -> None:
    headers = {"Authorization": f"Bearer {live_server.token}", "Content-Type": "application/json"}
    huge = "9" * digits
    for body in (
        f'{{"jsonrpc": "2.0", "id": {huge}, "method": "resource.list"}}',
        f'[{{"jsonrpc": "2.0", "id": {huge}, "method": "resource.list"}}]',
        f'{{"jsonrpc": "2.0", "id": 1, "method": "validation.list_results", '
        f'"params": {{"resource": "x", "limit": {huge}}}}}',
    ):
        response = httpx.post(f"{live_server.url}/acp/v1", content=body, headers=headers)
        assert response.status_code == 200, response.text
        assert response.json()["error"]["code"] == -32700


@pytest.mark.parametrize("value", ["9" * 5_000, "9" * 20, str(1 << 63)])
def test_a_huge_last_event_id_is_a_400(live_server: LiveServer, value: str) -> None:
    headers = {"Authorization": f"Bearer {live_server.token}", "Last-Event-ID": value}
    response = httpx.get(f"{live_server.url}/acp/v1/events", headers=headers, timeout=WAIT)
    assert response.status_code == 400
    assert "Last-Event-ID" in response.json()["error"]


def nofile(soft: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def flood_room() -> Iterator[None]:
    """Room in this process for the flood's sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FLOOD + 200:
        pytest.skip(f"the descriptor limit ({hard}) leaves no room for {FLOOD} sockets")
    if soft != resource.RLIM_INFINITY and soft < FLOOD + 200:
        nofile(FLOOD + 200)
    yield
    nofile(soft)


def test_half_open_connections_cannot_starve_health(tmp_path: Path, flood_room: None) -> None:
    data_dir = tmp_path / "data"
    log = tmp_path / "serve.log"
    backend = [str(Path(sys.executable).parent / "acp-backend"), "--data-dir", str(data_dir)]
    serve = subprocess.Popen(
        # The usual soft limit, below the flood.
        ["sh", "-c", 'ulimit -n 1024 && exec "$0" "$@"', *backend, "serve"],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + WAIT
        while (info := read_backend_file(data_dir)) is None:
            assert serve.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        for _ in range(FLOOD):
            held.append(socket.create_connection(("127.0.0.1", info.port), timeout=WAIT))
        for _ in range(3):
            started = time.monotonic()
            health = httpx.get(f"{info.url}/health", timeout=WAIT)
            assert health.json() == {"status": "ok"}
            assert time.monotonic() - started < 5.0
    finally:
        for sock in held:
            sock.close()
        serve.terminate()
        serve.wait(WAIT)
    assert "Too many open files" not in log.read_text(errors="replace")
    assert not (data_dir / BACKEND_FILE).exists()
