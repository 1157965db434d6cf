"""Floor: an LSP server in raw JSON-RPC over stdio (standard library only).

``python bench/floors/raw_server.py ROOT -- COMMAND...``: on every
``didSave`` it runs COMMAND in ROOT and publishes its findings.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from common import lint


class Server:
    def __init__(self, root: Path, command: list[str]) -> None:
        self.root = root
        self.command = command
        self.out = sys.stdout.buffer
        self.tasks: set[asyncio.Task[None]] = set()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.out.flush()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            length = 0
            while True:
                line = await reader.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            message = json.loads(await reader.readexactly(length))
            if self.handle(message):
                return

    def handle(self, message: dict[str, Any]) -> bool:
        method = message.get("method")
        if method == "initialize":
            sync = {"openClose": True, "change": 1, "save": {"includeText": False}}
            capabilities = {"textDocumentSync": sync}
            self.send(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": capabilities}}
            )
        elif method == "shutdown":
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            return True
        elif method == "textDocument/didSave":
            task = asyncio.create_task(self.publish())
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        elif "id" in message:
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        return False

    async def publish(self) -> None:
        for uri, diagnostics in (await lint(self.command, self.root)).items():
            params = {"uri": uri, "diagnostics": diagnostics}
            self.send(
                {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params}
            )


if __name__ == "__main__":
    separator = sys.argv.index("--")
    asyncio.run(Server(Path(sys.argv[1]), sys.argv[separator + 1 :]).run())
