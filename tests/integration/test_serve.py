"""``serve()`` as a real process: backend.json, the token, discovery, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from acp_backend.facade import create_facade
from acp_backend.http_server import AcpServer, UnsafeBind, check_bind, create_app, listen
from acp_client.connect import connect
from acp_client.discovery import read_backend_file
from acp_client.events import ResourceChanged
from acp_client.head_start import BACKEND_FILE
from acp_client.transport.http import HttpTransport

WAIT = 30.0
ACP_BACKEND = str(Path(sys.executable).parent / "acp-backend")


class Served:
    def __init__(self, data_dir: Path, log: Path, *options: str) -> None:
        self.data_dir = data_dir
        self.log = log
        self.process = subprocess.Popen(
            [ACP_BACKEND, "--data-dir", str(data_dir), "serve", "--port", "0", *options],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if k != "ACP_TOKEN"},
        )

    def wait_for_file(self) -> Path:
        path = self.data_dir / BACKEND_FILE
        deadline = time.monotonic() + WAIT
        while not path.exists():
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, "backend.json never appeared"
            time.sleep(0.002)  # a stop sent right as it appears finds any gap
        return path

    def stop(self, signum: int) -> int:
        self.process.send_signal(signum)
        return self.process.wait(WAIT)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = Served(tmp_path / "data", tmp_path / "serve.log")
    yield server
    if server.process.poll() is None:
        server.process.kill()
        server.process.wait(WAIT)


def children(pid: int) -> list[str]:
    """The command lines of ``pid``'s child processes (Linux /proc)."""
    listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    lines = []
    for child in listed:
        with contextlib.suppress(OSError):  # gone meanwhile
            lines.append(Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode())
    return lines


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_serve_starts_its_parse_server_before_any_run(served: Served) -> None:
    """Its interpreter's start must not land in the first burst of runs."""
    served.wait_for_file()
    deadline = time.monotonic() + WAIT
    while not any("isolation import serve" in line for line in children(served.process.pid)):
        assert time.monotonic() < deadline, children(served.process.pid)
        time.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_serve_publishes_a_private_backend_file_and_withdraws_it(
    served: Served, signum: int
) -> None:
    path = served.wait_for_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    info = read_backend_file(served.data_dir)
    assert info is not None
    assert info.pid == served.process.pid
    assert Path(info.data_dir) == served.data_dir.resolve()
    assert info.port > 0
    assert len(info.token) >= 32
    assert not list(served.data_dir.glob("*.tmp"))

    async with httpx.AsyncClient(base_url=info.url, timeout=WAIT) as http:
        request = {"jsonrpc": "2.0", "id": 1, "method": "resource.list", "params": {}}
        assert (await http.post("/acp/v1", json=request)).status_code == 401
        answered = await http.post(
            "/acp/v1", json=request, headers={"Authorization": f"Bearer {info.token}"}
        )
        assert answered.json() == {"jsonrpc": "2.0", "id": 1, "result": {"resources": []}}

    # Local mode finds it and talks to it instead of opening the store itself.
    async with await connect("local", data_dir=served.data_dir) as client:
        assert isinstance(client.transport, HttpTransport)
        assert await client.resource_list() == ()
        waiting = asyncio.ensure_future(anext(aiter(client.events())))
        await asyncio.sleep(0.3)
        # A shutdown with a subscriber attached still ends promptly.
        started = time.monotonic()
        served.stop(signum)
        assert time.monotonic() - started < 10
        waiting.cancel()

    assert not path.exists()
    log = served.log.read_text(errors="replace")
    assert "ACP backend on http://127.0.0.1" in log
    assert info.token not in log


def test_a_new_start_gets_a_new_token(tmp_path: Path) -> None:
    """Stopped the moment its file appears, each server still withdraws it
    (a file left behind would hand the next start the old token)."""
    tokens = []
    for run in range(2):
        server = Served(tmp_path / "data", tmp_path / f"serve{run}.log")
        path = server.wait_for_file()
        info = read_backend_file(server.data_dir)
        assert info is not None
        tokens.append(info.token)
        server.stop(signal.SIGTERM)
        assert not path.exists(), server.log.read_text(errors="replace")
    assert tokens[0] != tokens[1]


def test_backend_json_is_published_only_once_signals_are_handled(tmp_path: Path) -> None:
    """Published earlier, a SIGTERM in between would end the process with
    the file still there, naming a dead server and its token."""
    facade = create_facade(tmp_path / "data")
    sock = listen("127.0.0.1", 0)
    handlers: list[object] = []

    def on_started() -> None:
        handlers.extend(signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT))
        server.should_exit = True

    server = AcpServer(create_app(facade, "token"), facade, on_started=on_started)
    asyncio.run(server.serve_and_close(sock))
    sock.close()
    assert handlers == [server.handle_exit, server.handle_exit]


def test_a_second_server_on_a_served_data_dir_is_refused(served: Served, tmp_path: Path) -> None:
    path = served.wait_for_file()
    before = path.read_bytes()
    second = Served(served.data_dir, tmp_path / "second.log")
    assert second.process.wait(WAIT) != 0
    assert f"pid {served.process.pid}" in second.log.read_text()
    assert path.read_bytes() == before


def test_a_non_loopback_bind_without_tls_is_refused(tmp_path: Path) -> None:
    result = subprocess.run(
        [ACP_BACKEND, "--data-dir", str(tmp_path), "serve", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert result.returncode != 0
    assert "--insecure-bind" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / BACKEND_FILE).exists()


@pytest.mark.parametrize(
    ("host", "tls", "insecure", "allowed"),
    [
        ("127.0.0.1", False, False, True),
        ("::1", False, False, True),
        ("localhost", False, False, True),
        ("0.0.0.0", False, False, False),
        ("192.168.1.10", False, False, False),
        ("example.com", False, False, False),
        ("0.0.0.0", True, False, True),
        ("0.0.0.0", False, True, True),
    ],
)
def test_bind_policy(host: str, tls: bool, insecure: bool, allowed: bool) -> None:
    if allowed:
        check_bind(host, tls, insecure)
    else:
        with pytest.raises(UnsafeBind, match=host):
            check_bind(host, tls, insecure)


async def test_initialize_names_the_position_to_subscribe_after(
    served: Served, tmp_path: Path
) -> None:
    """What happens between the initialize and the moment the HTTP stream
    connects is replayed to a subscriber starting after ``last_event_id``."""
    served.wait_for_file()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    async with await connect("local", data_dir=served.data_dir) as client:
        assert (await client.initialize()).last_event_id is None  # an empty log
        await client.resource_register(str(tmp_path / "a"))
        answer = await client.initialize()
        assert answer.last_event_id is not None
        await client.resource_register(str(tmp_path / "b"))  # before the stream connects
        events = aiter(client.events(after=answer.last_event_id))
        replayed = await asyncio.wait_for(anext(events), WAIT)
        assert isinstance(replayed, ResourceChanged)
        assert replayed.event_id == answer.last_event_id + 1
        assert Path(replayed.resource.root) == (tmp_path / "b").resolve()
