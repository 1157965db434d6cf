"""A minimal LSP client on the standard library: what an editor does, no more.

It frames and parses every message the server sends (``Content-Length`` +
``json.loads``) the way an editor must, answers the server's requests with
what a plain editor would, and timestamps each ``publishDiagnostics`` on
arrival. No pygls: its own parsing would dominate what is measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Published:
    at: float
    uri: str
    count: int
    size: int  # bytes of the message body


@dataclass
class Wire:
    process: asyncio.subprocess.Process
    published: list[Published] = field(default_factory=list)
    bytes_in: int = 0
    messages_in: int = 0
    _ids: int = 0
    _waiting: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    _reader: asyncio.Task[None] | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    async def start(
        cls, command: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> Wire:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None if os.environ.get("BENCH_SERVER_STDERR") else asyncio.subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            limit=1 << 26,
        )
        wire = cls(process)
        wire._reader = asyncio.create_task(wire._read())
        return wire

    # --- sending -----------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any, seconds: float = 60) -> Any:
        self._ids += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[self._ids] = future
        self._send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        return await asyncio.wait_for(future, seconds)

    async def initialize(self, root: Path, *, pull: bool = False, options: Any = None) -> Any:
        capabilities: dict[str, Any] = {
            "textDocument": {
                "synchronization": {"didSave": True},
                "publishDiagnostics": {"versionSupport": True},
            },
            "workspace": {"workspaceFolders": True, "configuration": True},
            "window": {"workDoneProgress": False},
        }
        answer = await self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": capabilities,
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        return answer

    def open(self, path: Path, language: str = "python") -> None:
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": path.as_uri(),
                    "languageId": language,
                    "version": 1,
                    "text": path.read_text(encoding="utf-8"),
                }
            },
        )

    def save(self, path: Path) -> None:
        self.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, seconds=10)
            self.notify("exit", None)
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        if self._reader is not None:
            self._reader.cancel()

    # --- receiving ---------------------------------------------------------

    def arrivals(self) -> Callable[[], list[Published]]:
        """A reader of the publishes that came since its last call. A wait's
        condition runs after every read from the pipe: rescanning all the
        publishes each time made the client quadratic in a 10,000-file
        burst, and its CPU came out of the server's on a small machine."""
        seen = len(self.published)

        def new() -> list[Published]:
            nonlocal seen
            fresh = self.published[seen:]
            seen += len(fresh)
            return fresh

        return new

    async def wait(self, condition: Callable[[], bool], seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the server never delivered what was expected")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = 0
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = await stdout.readexactly(length)
            at = time.monotonic()
            self.bytes_in += length
            self.messages_in += 1
            self._handle(json.loads(body), at, length)
            self._changed.set()

    def _handle(self, message: dict[str, Any], at: float, size: int) -> None:
        method = message.get("method")
        if method is None:
            future = self._waiting.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(str(message["error"])))
                else:
                    future.set_result(message.get("result"))
            return
        if method == "textDocument/publishDiagnostics":
            params = message["params"]
            self.published.append(Published(at, params["uri"], len(params["diagnostics"]), size))
        elif "id" in message:  # a request: answer as a plain editor would
            result: Any = None
            if method == "workspace/configuration":
                result = [None for _ in message["params"]["items"]]
            elif method == "workspace/workspaceFolders":
                result = []
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
