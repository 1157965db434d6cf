"""Floor: a bare pygls server doing the same as ``raw_server.py``.

``python bench/floors/pygls_server.py ROOT -- COMMAND...``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from common import lint
from lsprotocol import types
from pygls.lsp.server import LanguageServer


def main() -> None:
    root = Path(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1 :]
    server = LanguageServer("pygls-floor", "0")

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def saved(ls: LanguageServer, _: types.DidSaveTextDocumentParams) -> None:
        for uri, diagnostics in (await lint(command, root)).items():
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uri,
                    diagnostics=[
                        ls.protocol._converter.structure(d, types.Diagnostic) for d in diagnostics
                    ],
                )
            )

    server.start_io()


if __name__ == "__main__":
    main()
