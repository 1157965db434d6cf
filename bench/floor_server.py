"""The floor: the least a pygls server can do with the same event stream.

Same client and transport as ``acp-lsp`` (``acp_client.connect``), but no
store, no resolution, no encoding, no coalescing: each ``validation.result``
becomes one ``publishDiagnostics`` per file it names, built directly.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from acp_client.connect import connect
from acp_client.events import ValidationResultEvent
from acp_client.paths import path_to_uri


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--acp", default="local")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--token-file", type=Path)
    parser.add_argument("--facade")
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    server = LanguageServer("floor", "0")
    tasks: set[asyncio.Task[Any]] = set()

    async def follow() -> None:
        client = await connect(
            args.acp, data_dir=args.data_dir, token_file=args.token_file, facade=args.facade
        )
        async for event in client.events():
            if not isinstance(event, ValidationResultEvent):
                continue
            by_file: dict[str, list[types.Diagnostic]] = {}
            for finding in event.result.findings:
                assert finding.location is not None
                loc = finding.location
                by_file.setdefault(loc.path, []).append(
                    types.Diagnostic(
                        range=types.Range(
                            types.Position(loc.line, loc.character),
                            types.Position(loc.line, loc.character + 1),
                        ),
                        message=finding.message,
                    )
                )
            for path, diagnostics in by_file.items():
                server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(
                        uri=path_to_uri(f"{args.root}/{path}"), diagnostics=diagnostics
                    )
                )

    @server.feature(types.INITIALIZED)
    async def initialized(_: types.InitializedParams) -> None:
        task = asyncio.create_task(follow())
        tasks.add(task)

    server.start_io(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
