"""``acp-lsp --tcp`` and ``--ws`` speak the same LSP as stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from websockets.asyncio.client import connect as ws_connect

from tests.support.servers import free_port

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"processId": None, "rootUri": None, "capabilities": {}},
}


@pytest_asyncio.fixture
async def listening(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[int]:
    """The server on a free port, once it says it is listening (a probe
    connection would be taken for the editor's: pygls serves one)."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "lsp_server", f"--{request.param}", f"127.0.0.1:{port}"],
        *["--data-dir", str(tmp_path), "--log-level", "INFO"],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        async with asyncio.timeout(10):
            while b"Serving on" not in await process.stderr.readline():
                pass
        yield port
    finally:
        process.terminate()
        await process.wait()
        assert await process.stdout.read() == b""  # nothing on stdout outside the protocol


@pytest.mark.parametrize("listening", ["tcp"], indirect=True)
async def test_tcp(listening: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", listening)
    body = json.dumps(INITIALIZE).encode()
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    header = await reader.readuntil(b"\r\n\r\n")
    length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    answer = json.loads(await reader.readexactly(length))
    assert answer["result"]["serverInfo"]["name"] == "acp-lsp"
    writer.close()


@pytest.mark.parametrize("listening", ["ws"], indirect=True)
async def test_websocket(listening: int) -> None:
    async with ws_connect(f"ws://127.0.0.1:{listening}") as socket:
        await socket.send(json.dumps(INITIALIZE))
        answer = json.loads(await socket.recv())
    assert answer["result"]["serverInfo"]["name"] == "acp-lsp"


async def test_exits_when_the_editor_goes_away(tmp_path: Path) -> None:
    """stdin closed without shutdown/exit (the editor crashed): no orphan,
    and no crash, even while the features still load (ADR 0016)."""
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "lsp_server", "--data-dir", str(tmp_path)],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    for message in (INITIALIZE, {"jsonrpc": "2.0", "method": "initialized", "params": {}}):
        body = json.dumps(message).encode()
        process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await process.stdin.drain()
    await process.stdout.readuntil(b"serverInfo")  # it answered initialize
    process.stdin.close()
    async with asyncio.timeout(10):
        assert process.stderr is not None
        stderr = await process.stderr.read()
        assert await process.wait() == 0
    assert b"Traceback" not in stderr and b"FATAL" not in stderr
