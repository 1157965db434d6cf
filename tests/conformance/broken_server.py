"""acp-lsp with one thing broken, to prove the kit's server suite catches it.

``python -m tests.conformance.broken_server MODE [acp-lsp arguments]``:
``stdout`` prints a line to stdout before speaking LSP; ``severity`` shows
failed informational results as Errors; ``utf16`` counts UTF-16 columns in
code points (wrong after an astral character such as an emoji); ``spec``
asks ``workspace/configuration`` of clients that did not offer it;
``plaintext`` answers hover in plain text to every client, ``markdown`` in
Markdown to every client; ``trusting`` takes a plan's paths as the backend
gives them (no jail in the contract, none before the editor's edit).
"""

from __future__ import annotations

import dataclasses
import sys

from lsprotocol.types import PositionEncodingKind

from acp_client import models
from acp_client.models import ValidationMode
from lsp_server import __main__ as acp_lsp
from lsp_server import capabilities, marks, positions
from lsp_server.features import plans

_columns = positions.columns  # the one rule every column goes through


def informational_as_error(mode: ValidationMode, passed: bool) -> marks.Severity | None:
    if passed:
        return None if mode is ValidationMode.REQUIRED else marks.Severity.HINT
    return marks.Severity.ERROR  # informational failures should be Warnings


def utf16_as_code_points(
    line: str, start: int, end: int, encoding: PositionEncodingKind | str
) -> tuple[int, int]:
    if encoding in (PositionEncodingKind.Utf8, PositionEncodingKind.Utf32):
        return _columns(line, start, end, encoding)
    return len(line[:start]), len(line[:end])  # UTF-16, however the encoding is spelled


def main(argv: list[str]) -> int:
    mode, rest = argv[0], argv[1:]
    if mode == "stdout":
        sys.stdout.write("acp-lsp: starting\n")
        sys.stdout.flush()
    elif mode == "severity":
        marks.severity_for = informational_as_error
    elif mode == "utf16":
        positions.columns = utf16_as_code_points
    elif mode == "spec":
        resolve = capabilities.ClientSupport.of
        capabilities.ClientSupport.of = lambda params: dataclasses.replace(  # type: ignore[method-assign]
            resolve(params), configuration=True
        )
    elif mode in ("plaintext", "markdown"):
        resolve = capabilities.ClientSupport.of
        capabilities.ClientSupport.of = lambda params: dataclasses.replace(  # type: ignore[method-assign]
            resolve(params), hover_markdown=mode == "markdown"
        )
    elif mode == "trusting":
        models.why_refused = lambda path: None
        plans._escape = lambda *args: None
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    return acp_lsp.main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
