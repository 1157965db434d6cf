"""The hover floor: a bare pygls server answering every hover with fixed Markdown.

It shares no code with acp-lsp (only pygls and lsprotocol): what any pygls
server pays to receive a hover request and send a Markdown answer.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

ANSWER = types.Hover(
    contents=types.MarkupContent(
        kind=types.MarkupKind.Markdown,
        value="**Error** from **lint** (required)  \nUndefined name `x`\n\n---\n\n"
        "```python\ndef f(a: int) -> int\n```",
    )
)

server = LanguageServer("hover-floor", "0")


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(_: LanguageServer, __: types.HoverParams) -> types.Hover:
    return ANSWER


if __name__ == "__main__":
    server.start_io()
