"""The completion floor: a bare pygls server answering every completion with
a fixed list as long as acp-lsp's preset list, each item documented.

It shares no code with acp-lsp (only pygls and lsprotocol): what any pygls
server pays to receive a completion request and send such a list.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

ANSWER = types.CompletionList(
    is_incomplete=False,
    items=[
        types.CompletionItem(
            label=f"preset-{n}",
            kind=types.CompletionItemKind.EnumMember,
            detail=f"a tool, SARIF (code points) {n}",
            documentation=types.MarkupContent(
                kind=types.MarkupKind.Markdown,
                value=f"**preset-{n}**: a tool\n\n`tool` found at `/usr/bin/tool`\n\n"
                '```toml\ncommand = ["tool", "{files}"]\nformat = "sarif"\n```',
            ),
            text_edit=types.TextEdit(
                range=types.Range(types.Position(1, 10), types.Position(1, 10)),
                new_text=f"preset-{n}",
            ),
        )
        for n in range(16)
    ],
)

server = LanguageServer("completion-floor", "0")


@server.feature(types.TEXT_DOCUMENT_COMPLETION)
def complete(_: LanguageServer, __: types.CompletionParams) -> types.CompletionList:
    return ANSWER


if __name__ == "__main__":
    server.start_io()
