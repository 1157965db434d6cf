"""Both transports against the real backend, and every failure class over HTTP."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer, http_response

from acp_client.client import AcpClient
from acp_client.connect import connect
from acp_client.errors import (
    AuthenticationError,
    BackendTimeout,
    BackendUnreachable,
    InvalidRequest,
    MethodNotFound,
    NotFound,
    RemoteError,
    ServerFault,
    TlsError,
    TransportError,
)
from acp_client.events import ResourceChanged
from acp_client.transport.http import HttpTransport
from acp_client.transport.inprocess import InProcessTransport
from tests.support.servers import free_port


def projects(root: Path, *names: str) -> list[Path]:
    paths = [root / name for name in names]
    for path in paths:
        path.mkdir(parents=True)
    return paths


async def test_resource_list_is_identical_in_both_transports(
    live_server: LiveServer, tmp_path: Path
) -> None:
    alpha, beta = projects(tmp_path / "work", "alpha", "beta")
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as remote:
        await remote.resource_register(str(alpha))
        await remote.resource_register(str(beta), name="b")
        over_http = await remote.resource_list()
        raw_http = await remote.transport.call("resource.list", {})
    transport = InProcessTransport.load(data_dir=live_server.data_dir)
    async with AcpClient(transport) as local:
        in_process = await local.resource_list()
        # In process the result is handed over typed; as JSON it is the same.
        typed = await transport.call("resource.list", {})
        raw_local = await transport.facade.dispatch("resource.list", {})
    assert [resource.name for resource in over_http] == ["alpha", "b"]
    assert in_process == over_http
    assert raw_local == raw_http == typed.model_dump(mode="json")


async def test_domain_errors_arrive_as_their_remote_error_type(live_server: LiveServer) -> None:
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        with pytest.raises(NotFound) as missing:
            await client.resource_unregister("no-such-resource")
        with pytest.raises(MethodNotFound):
            await client.transport.call("no.such.method", {})
    assert not isinstance(missing.value, TransportError)
    assert missing.value.to_error_object()["code"] == -32001


async def test_a_wrong_token_is_an_authentication_error_not_an_outage(
    live_server: LiveServer,
) -> None:
    for token in (None, "not-the-token"):
        async with AcpClient(HttpTransport(live_server.url, token=token)) as client:
            with pytest.raises(AuthenticationError) as caught:
                await client.resource_list()
        assert not isinstance(caught.value, TransportError | RemoteError)


async def test_connection_refused_is_backend_unreachable() -> None:
    async with AcpClient(HttpTransport(f"http://127.0.0.1:{free_port()}", token="t")) as client:
        with pytest.raises(BackendUnreachable):
            await client.resource_list()


async def test_a_peer_that_never_answers_is_a_timeout(canned: Any) -> None:
    peer = await canned(None)
    transport = HttpTransport(peer.url, token="t", read_timeout=0.3)
    async with AcpClient(transport) as client:
        with pytest.raises(BackendTimeout):
            await client.resource_list()


@pytest.mark.parametrize(
    ("response", "status"),
    [
        (http_response(500, b'{"jsonrpc": "2.0", "id": 1, "result": {}}'), 500),
        (http_response(503, b"busy", "text/plain"), 503),
        (http_response(200, b"<html>a login page</html>", "text/html"), 200),
        (http_response(200, b'{"hello": "world"}'), None),
        (http_response(200, b'{"jsonrpc": "2.0", "id": 999, "result": {}}'), None),
        (http_response(404, b"not found", "text/plain"), 404),
    ],
)
async def test_a_peer_that_does_not_speak_acp_is_a_server_fault(
    canned: Any, response: bytes, status: int | None
) -> None:
    peer = await canned(response)
    async with AcpClient(HttpTransport(peer.url, token="t")) as client:
        with pytest.raises(ServerFault) as caught:
            await client.resource_list()
    assert caught.value.status == status


async def test_a_business_message_that_reads_like_an_outage_stays_a_business_error(
    canned: Any,
) -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, '
        b'"message": "connection refused: timeout TLS 503", "data": {"code": "NOT_FOUND"}}}'
    )
    peer = await canned(http_response(200, body))
    async with AcpClient(HttpTransport(peer.url, token="t")) as client:
        with pytest.raises(NotFound):
            await client.resource_list()


async def test_tls_is_verified_by_default_and_a_ca_bundle_makes_it_trusted(
    make_server: Any, tls_files: tuple[Path, Path]
) -> None:
    server: LiveServer = make_server(tls=tls_files)
    async with AcpClient(HttpTransport(server.url, token=server.token)) as untrusting:
        with pytest.raises(TlsError):
            await untrusting.resource_list()
    transport = HttpTransport(server.url, token=server.token, ca_bundle=tls_files[0])
    async with AcpClient(transport) as trusting:
        assert await trusting.resource_list() == ()


def test_an_unreadable_ca_bundle_is_a_tls_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "missing-ca.pem"
    with pytest.raises(TlsError) as caught:
        HttpTransport("https://127.0.0.1:1", ca_bundle=missing)
    assert str(missing) in str(caught.value)


@pytest.mark.parametrize(
    "url", ["http://example.com", "http://10.0.0.1:8080", "ftp://127.0.0.1", "not a url"]
)
def test_plain_http_is_refused_beyond_loopback(url: str) -> None:
    with pytest.raises(ValueError, match="https"):
        HttpTransport(url)


def test_credentials_in_the_url_are_refused_without_echoing_them() -> None:
    with pytest.raises(ValueError, match="token") as caught:
        HttpTransport("https://user:hunter2@acp.example")
    assert "hunter2" not in str(caught.value)


async def test_the_token_never_shows_in_logs_errors_or_reprs(
    live_server: LiveServer, canned: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = live_server.token
    seen: list[str] = []
    transport = HttpTransport(live_server.url, token=secret)
    async with AcpClient(transport) as client:
        await client.resource_list()
        with pytest.raises(RemoteError) as remote:
            await client.transport.call("no.such.method", {})
        seen += [repr(transport), repr(client), str(remote.value), repr(remote.value)]
        seen.append(repr(transport._http.auth))
    failing = [
        HttpTransport(live_server.url, token=secret + "x"),
        HttpTransport(f"http://127.0.0.1:{free_port()}", token=secret),
        HttpTransport((await canned(http_response(502, b"bad gateway"))).url, token=secret),
    ]
    for other in failing:
        with pytest.raises((AuthenticationError, TransportError)) as caught:
            await other.call("resource.list", {})
        seen += [str(caught.value), repr(caught.value), repr(caught.value.__cause__)]
        await other.aclose()
    seen.append(caplog.text)
    leaks = [text for text in seen if secret in text]
    assert not leaks


async def test_connect_to_a_url_takes_the_token_from_a_file_or_the_environment(
    live_server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(live_server.token + "\n", encoding="utf-8")
    monkeypatch.setenv("ACP_TOKEN", "stale-token")
    async with await connect(live_server.url, token_file=token_file) as client:
        assert await client.resource_list() == ()
    async with await connect(live_server.url) as client:
        with pytest.raises(AuthenticationError):
            await client.resource_list()
    monkeypatch.setenv("ACP_TOKEN", live_server.token)
    async with await connect(live_server.url) as client:
        assert isinstance(client.transport, HttpTransport)
        assert await client.resource_list() == ()


async def test_an_oversized_call_is_refused_as_an_invalid_request(live_server: LiveServer) -> None:
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        with pytest.raises(InvalidRequest, match="exceeds"):
            await client.transport.call("resource.list", {"pad": "x" * (2 << 20)})
        assert await client.resource_list() == ()


@pytest.mark.parametrize("path", ["", "/", "/acp/v1", "/acp/v1/"])
async def test_the_server_url_works_with_or_without_the_endpoint_path(
    live_server: LiveServer, path: str, tmp_path: Path
) -> None:
    """The README names the endpoint (``https://host/acp/v1``); the client
    appends the paths itself, so either spelling reaches the same server,
    calls and events alike."""
    (project,) = projects(tmp_path, "project")
    async with await connect(live_server.url + path, token=live_server.token) as client:
        registered = await client.resource_register(str(project))
        assert await client.resource_list() == (registered,)
        async for event in client.events(0):
            assert isinstance(event, ResourceChanged) and event.resource == registered
            break
