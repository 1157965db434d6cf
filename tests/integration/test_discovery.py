"""Local mode's discovery: a live backend is used, anything less is ignored."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer, http_response

from acp_client.client import AcpClient
from acp_client.connect import connect
from acp_client.discovery import read_backend_file
from acp_client.head_start import BACKEND_FILE
from acp_client.transport.http import HttpTransport
from acp_client.transport.inprocess import InProcessTransport
from tests.support.servers import free_port

# Discovery's own budget is 300 ms; the rest is slack for a loaded machine.
FALLBACK_BUDGET = 3.0


def backend_json(where: Path, **overrides: Any) -> Path:
    """Write ``where/backend.json``; by default it names ``where`` as its data dir."""
    fields: dict[str, Any] = {
        "port": free_port(),
        "token": "some-token",
        "pid": os.getpid(),
        "data_dir": str(where),
        "started_at": datetime.now(UTC).isoformat(),
        "version": "0.1.0",
        **overrides,
    }
    where.mkdir(parents=True, exist_ok=True)
    path = where / BACKEND_FILE
    path.write_text(json.dumps(fields), encoding="utf-8")
    return path


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def connect_locally(data_dir: Path) -> tuple[AcpClient, float]:
    started = time.monotonic()
    client = await connect("local", data_dir=data_dir)
    return client, time.monotonic() - started


async def assert_in_process(data_dir: Path) -> None:
    client, took = await connect_locally(data_dir)
    async with client:
        assert isinstance(client.transport, InProcessTransport)
        assert await client.resource_list() == ()
    assert took < FALLBACK_BUDGET


async def test_a_live_backend_is_used_over_loopback(live_server: LiveServer) -> None:
    backend_json(live_server.data_dir, port=live_server.port, token=live_server.token)
    client, _ = await connect_locally(live_server.data_dir)
    async with client:
        assert isinstance(client.transport, HttpTransport)
        assert client.transport.base_url == live_server.url
        assert await client.resource_list() == ()


async def test_no_backend_file_means_in_process(tmp_path: Path) -> None:
    await assert_in_process(tmp_path / "data")


async def test_a_dead_pid_is_ignored(live_server: LiveServer) -> None:
    # Even with a healthy server on the port: the file's process is gone.
    backend_json(
        live_server.data_dir, port=live_server.port, token=live_server.token, pid=dead_pid()
    )
    await assert_in_process(live_server.data_dir)


async def test_a_live_pid_with_nothing_on_the_port_is_ignored(tmp_path: Path) -> None:
    backend_json(tmp_path / "data", pid=os.getpid(), port=free_port())
    await assert_in_process(tmp_path / "data")


async def test_a_live_pid_whose_port_answers_something_else_is_ignored(
    tmp_path: Path, canned: Any
) -> None:
    peer = await canned(http_response(200, b'{"status": "starting"}'))
    backend_json(tmp_path / "data", port=peer.port)
    await assert_in_process(tmp_path / "data")


async def test_a_port_that_never_answers_is_given_up_within_the_budget(
    tmp_path: Path, canned: Any
) -> None:
    peer = await canned(None)
    backend_json(tmp_path / "data", port=peer.port)
    await assert_in_process(tmp_path / "data")


async def test_another_data_dirs_file_is_ignored(live_server: LiveServer, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    backend_json(
        mine, port=live_server.port, token=live_server.token, data_dir=str(live_server.data_dir)
    )
    await assert_in_process(mine)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"\xff\xfe\x00",
        b"[1, 2, 3]",
        b'{"port": "eighty", "token": "t"}',
        b'{"port": 0, "token": "t", "pid": 1, "data_dir": "/x", "started_at": "now", '
        b'"version": "1"}',
    ],
)
async def test_a_garbage_file_is_ignored_and_logged_at_debug(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / BACKEND_FILE).write_bytes(content)
    caplog.set_level(logging.DEBUG, logger="acp_client.discovery")
    await assert_in_process(data_dir)
    assert BACKEND_FILE in caplog.text
    assert all(record.levelno == logging.DEBUG for record in caplog.records)


async def test_an_unreadable_file_is_ignored(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    (data_dir / BACKEND_FILE).mkdir(parents=True)  # a directory where the file should be
    assert read_backend_file(data_dir) is None
    await assert_in_process(data_dir)


def test_the_token_is_not_in_the_repr_of_backend_info(tmp_path: Path) -> None:
    backend_json(tmp_path, token="very-secret-token")
    info = read_backend_file(tmp_path)
    assert info is not None
    assert info.token == "very-secret-token"
    assert "very-secret-token" not in repr(info)
    assert "very-secret-token" not in str(info)
