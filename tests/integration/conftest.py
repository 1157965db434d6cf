"""Real servers for the wire tests: uvicorn on 127.0.0.1 in a thread, and a
TCP proxy that can cut or freeze connections like a bad network does."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import pytest

from acp_backend.facade import create_facade
from acp_backend.http_server import AcpServer, create_app, listen

START_TIMEOUT = 20.0


class LiveServer:
    """The real app over the real facade, served by uvicorn in its own thread.

    The facade is created inside the server's thread (SQLite connections stay
    on the thread that made them). ``restart()`` brings it back on the same
    port with the same token, as a backend restart behind a fixed address.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        keepalive: float = 15.0,
        retention: int | None = None,
        tls: tuple[Path, Path] | None = None,
        **options: Any,
    ) -> None:
        """``options`` go to ``AcpServer`` (limits) and on to uvicorn."""
        self.data_dir = data_dir
        self.options = options
        self.token = secrets.token_urlsafe(32)
        self.keepalive = keepalive
        self.retention = retention
        self.tls = tls
        self.port = 0
        self._server: AcpServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def start(self) -> LiveServer:
        sock = listen("127.0.0.1", self.port)
        self.port = sock.getsockname()[1]
        ready = threading.Event()

        async def main() -> None:
            facade = create_facade(self.data_dir, event_retention=self.retention)
            app = create_app(facade, self.token, keepalive_interval=self.keepalive)
            tls = {}
            if self.tls:
                tls = {"ssl_certfile": self.tls[0], "ssl_keyfile": self.tls[1]}
            self._server = AcpServer(app, facade, log_level="warning", **tls, **self.options)
            ready.set()
            await self._server.serve_and_close(sock)

        self._thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
        self._thread.start()
        assert ready.wait(START_TIMEOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while not (self._server and self._server.started):
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(START_TIMEOUT)
            assert not self._thread.is_alive(), "uvicorn did not stop"
        self._server = self._thread = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path / "data").start()
    yield server
    server.stop()


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Any]:
    """Start servers with custom settings; all are stopped at teardown."""
    started: list[LiveServer] = []

    def make(**settings: Any) -> LiveServer:
        server = LiveServer(tmp_path / f"data{len(started)}", **settings).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


class LoopbackTcpServer:
    """A TCP server on 127.0.0.1 (ephemeral port) in the test's event loop."""

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


@dataclass
class _Link:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    frozen: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class TcpProxy(LoopbackTcpServer):
    """Forwards 127.0.0.1:port to the server; ``kill()`` resets every open
    connection, ``freeze()`` silently drops their bytes (a dead path whose
    sockets never close). New connections are forwarded normally."""

    def __init__(self, upstream_port: int) -> None:
        super().__init__()
        self.upstream_port = upstream_port
        self.links: list[_Link] = []
        self.accepted = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        link = _Link(writer, up_writer)
        self.links.append(link)
        link.tasks = [
            asyncio.create_task(self._pipe(link, reader, up_writer)),
            asyncio.create_task(self._pipe(link, up_reader, writer)),
        ]

    @staticmethod
    async def _pipe(link: _Link, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await source.read(65536):
                if not link.frozen:
                    sink.write(data)
                    await sink.drain()
        if not link.frozen:
            sink.close()

    def kill(self) -> None:
        for link in self.links:
            for task in link.tasks:
                task.cancel()
            link.client.transport.abort()
            link.upstream.transport.abort()
        self.links.clear()

    def freeze(self) -> None:
        for link in self.links:
            link.frozen = True

    async def aclose(self) -> None:
        self.kill()
        await super().aclose()


@pytest.fixture
async def proxy_to() -> AsyncIterator[Any]:
    proxies: list[TcpProxy] = []

    async def make(server: LiveServer) -> TcpProxy:
        proxy = await TcpProxy(server.port).start()
        proxies.append(proxy)
        return proxy

    yield make
    for proxy in proxies:
        await proxy.aclose()


class CannedPeer(LoopbackTcpServer):
    """A TCP peer that is not an ACP backend: it answers every HTTP request
    with one fixed response, or (``response=None``) never answers at all."""

    def __init__(self, response: bytes | None) -> None:
        super().__init__()
        self.response = response
        self._held: list[asyncio.StreamWriter] = []

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.response is None:
            self._held.append(writer)  # keep the socket open, say nothing
            return
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            writer.write(self.response)
            await writer.drain()
        writer.close()

    async def aclose(self) -> None:
        for writer in self._held:
            writer.close()
        await super().aclose()


def http_response(status: int, body: bytes, content_type: str = "application/json") -> bytes:
    head = (
        f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


@pytest.fixture
async def canned() -> AsyncIterator[Any]:
    peers: list[CannedPeer] = []

    async def make(response: bytes | None) -> CannedPeer:
        peer = await CannedPeer(response).start()
        peers.append(peer)
        return peer

    yield make
    for peer in peers:
        await peer.aclose()


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (made with the openssl CLI)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key
