"""Discovery that holds under load, on every address a server can bind, and
a served data dir that stays served however slow its server is to answer."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_serve import WAIT, Served

from acp_client.connect import connect, in_process, should_rediscover
from acp_client.discovery import read_backend_file
from acp_client.head_start import BACKEND_FILE
from acp_client.transport.http import HttpTransport

CLIENTS = 20
# One language server's connect, as a separate process: which transport it got.
CHILD = """
import asyncio, sys
from pathlib import Path
from acp_client.connect import connect
async def main():
    async with await connect("local", data_dir=Path(sys.argv[1])) as client:
        await client.initialize(client_name="load")
        await client.resource_list()
        print(type(client.transport).__name__)
asyncio.run(main())
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = Served(tmp_path / "data", tmp_path / "serve.log")
    server.wait_for_file()
    yield server
    server.process.send_signal(signal.SIGCONT)
    server.process.kill()
    server.process.wait(WAIT)


def test_twenty_clients_starting_at_once_all_find_the_server(served: Served) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(served.data_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        for _ in range(CLIENTS)
    ]
    outcomes = [child.communicate(timeout=WAIT * 2) for child in children]
    transports = [out.strip() for out, _ in outcomes]
    assert transports == ["HttpTransport"] * CLIENTS, [err for _, err in outcomes]


def suspended(process: subprocess.Popen[bytes], seconds: float) -> threading.Timer:
    """Freeze ``process`` (its /health cannot answer) and thaw it after ``seconds``."""
    process.send_signal(signal.SIGSTOP)
    thaw = threading.Timer(seconds, process.send_signal, (signal.SIGCONT,))
    thaw.start()
    return thaw


async def test_a_server_slow_to_answer_is_waited_for_not_replaced(served: Served) -> None:
    thaw = suspended(served.process, 1.5)
    started = time.monotonic()
    async with await connect("local", data_dir=served.data_dir) as client:
        assert isinstance(client.transport, HttpTransport)
        assert await client.resource_list() == ()
    assert time.monotonic() - started >= 1.0
    thaw.join()


def test_a_second_serve_is_refused_even_while_the_first_cannot_answer(
    served: Served, tmp_path: Path
) -> None:
    before = (served.data_dir / BACKEND_FILE).read_bytes()
    thaw = suspended(served.process, 10.0)
    try:
        second = Served(served.data_dir, tmp_path / "second.log")
        assert second.process.wait(WAIT) == 2
    finally:
        thaw.cancel()
        served.process.send_signal(signal.SIGCONT)
    said = second.log.read_text()
    assert f"pid {served.process.pid}" in said and "Traceback" not in said
    assert (served.data_dir / BACKEND_FILE).read_bytes() == before


async def test_a_killed_server_leaves_nothing_that_holds_the_data_dir(
    served: Served, tmp_path: Path
) -> None:
    served.process.kill()
    served.process.wait(WAIT)
    assert (served.data_dir / BACKEND_FILE).exists()  # no chance to withdraw it
    started = time.monotonic()
    async with await connect("local", data_dir=served.data_dir) as client:
        assert in_process(client)
    assert time.monotonic() - started < 2.0  # no patience for a dead server
    again = Served(served.data_dir, tmp_path / "again.log")
    try:
        deadline = time.monotonic() + WAIT
        while (info := read_backend_file(served.data_dir)) is None or info.pid != again.process.pid:
            assert again.process.poll() is None, again.log.read_text()
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
    finally:
        again.stop(signal.SIGTERM)


async def test_a_client_that_fell_back_learns_that_a_server_appeared(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    async with await connect("local", data_dir=data_dir) as fell_back:
        assert in_process(fell_back)
        assert not should_rediscover(fell_back, data_dir)
        later = Served(data_dir, tmp_path / "serve.log")
        try:
            later.wait_for_file()
            assert should_rediscover(fell_back, data_dir)
            async with await connect("local", data_dir=data_dir) as again:
                assert not in_process(again)
                assert not should_rediscover(again, data_dir)
        finally:
            later.stop(signal.SIGTERM)
        assert not should_rediscover(fell_back, data_dir)  # gone again


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


async def served_on(tmp_path: Path, *options: str) -> Served:
    server = Served(tmp_path / "data", tmp_path / "serve.log", *options)
    server.wait_for_file()
    return server


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
async def test_a_server_on_ipv6_loopback_is_found(tmp_path: Path) -> None:
    server = await served_on(tmp_path, "--host", "::1")
    try:
        info = json.loads((server.data_dir / BACKEND_FILE).read_text())
        assert (info["scheme"], info["host"]) == ("http", "::1")
        async with await connect("local", data_dir=server.data_dir) as client:
            assert isinstance(client.transport, HttpTransport)
            assert client.transport.base_url == f"http://[::1]:{info['port']}"
            assert await client.resource_list() == ()
    finally:
        server.stop(signal.SIGTERM)


async def test_a_tls_server_is_found_and_verified_by_its_certificate(
    tmp_path: Path, tls_files: tuple[Path, Path]
) -> None:
    cert, key = tls_files
    server = await served_on(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        info = read_backend_file(server.data_dir)
        assert info is not None
        assert info.url == f"https://127.0.0.1:{info.port}"
        assert info.tls_cert == str(cert.resolve())
        async with await connect("local", data_dir=server.data_dir) as client:
            assert isinstance(client.transport, HttpTransport)
            assert client.transport.base_url.startswith("https://")
            assert await client.resource_list() == ()
    finally:
        server.stop(signal.SIGTERM)
    assert "ACP backend on https://127.0.0.1:" in server.log.read_text()
