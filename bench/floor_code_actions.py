"""The floor for code-action listing: a bare pygls server, none of our code.

It answers every ``textDocument/codeAction`` with ``--count`` quick fixes,
each carrying one diagnostic of the request (as a real listing does) and a
small ``data`` to resolve later: the least any pygls server can do to list
that many actions, measured under the same load as ``acp-lsp``.
"""

from __future__ import annotations

import argparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    count = parser.parse_args().count
    server = LanguageServer("floor-code-actions", "0")

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(resolve_provider=True))
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        diagnostics = list(params.context.diagnostics) or [None]
        return [
            types.CodeAction(
                title=f"Fix {n}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d] if (d := diagnostics[n % len(diagnostics)]) else None,
                data={"uri": params.text_document.uri, "n": n},
            )
            for n in range(count)
        ]

    server.start_io()


if __name__ == "__main__":
    main()
