"""What both floor servers do on save: run the command, read its
``path:line:col: message`` lines, one ``publishDiagnostics`` per file.

Standard library only; shares nothing with acp-lsp.
"""

from __future__ import annotations

import asyncio
import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<message>.*)$")


async def lint(command: list[str], cwd: Path) -> dict[str, list[dict[str, Any]]]:
    """The command's findings as LSP diagnostics, by file URI."""
    process = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    out, _ = await process.communicate()
    by_uri: dict[str, list[dict[str, Any]]] = {}
    for text in out.decode("utf-8", "replace").splitlines():
        match = LINE.match(text)
        if match is None:
            continue
        path = posixpath.normpath(posixpath.join(str(cwd), match["path"]))
        line, column = int(match["line"]) - 1, int(match["column"]) - 1
        by_uri.setdefault("file://" + quote(path), []).append(
            {
                "range": {
                    "start": {"line": line, "character": column},
                    "end": {"line": line, "character": column + 1},
                },
                "severity": 1,
                "message": match["message"],
                "source": "floor",
            }
        )
    return by_uri
