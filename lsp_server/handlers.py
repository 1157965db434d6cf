"""LSP handlers: the one table from LSP methods to the session and its features.

Nothing here decides anything; each handler is one line. Async handlers run
as tasks, so none of them blocks the editor.

Registering them loads no feature: the options come from
``lsp_server.advertised``, and ``ls.features`` is built on first use, after
the ``initialize`` answer (ADR 0016).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from lsp_server import advertised
from lsp_server.server import AcpLanguageServer


def register(server: AcpLanguageServer) -> None:
    # --- lifecycle and workspace (the session) -------------------------------

    @server.feature(types.INITIALIZE)
    def initialize(ls: AcpLanguageServer, params: types.InitializeParams) -> None:
        ls.setup(params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: AcpLanguageServer, _: types.InitializedParams) -> None:
        ls.start()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: AcpLanguageServer, _: None) -> None:
        ls.stop()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(
        ls: AcpLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await ls.reload_settings(params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(
        ls: AcpLanguageServer, _: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        await ls.folders_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def opened(ls: AcpLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.document_opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def changed(ls: AcpLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.document_changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def saved(ls: AcpLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        await ls.document_saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def closed(ls: AcpLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.document_closed(params.text_document.uri)

    # --- diagnostics ----------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, advertised.DIAGNOSTICS)
    async def document_diagnostic(
        ls: AcpLanguageServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        return await ls.features.diagnostics.document_report(
            params.text_document.uri, params.previous_result_id
        )

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    def workspace_diagnostic(
        ls: AcpLanguageServer, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        return ls.features.diagnostics.workspace_report(params.previous_result_ids)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    async def progress_cancelled(
        ls: AcpLanguageServer, params: types.WorkDoneProgressCancelParams
    ) -> None:
        if not await ls.features.commands.progress.cancelled(str(params.token)):
            await ls.features.diagnostics.progress_cancelled(str(params.token))

    # --- code actions and commands --------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, advertised.CODE_ACTIONS)
    def code_action(
        ls: AcpLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        return ls.features.code_actions.offered(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    def code_action_resolve(ls: AcpLanguageServer, action: types.CodeAction) -> types.CodeAction:
        return ls.features.code_actions.resolve(action)

    # --- hover ----------------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: AcpLanguageServer, params: types.HoverParams) -> types.Hover | None:
        return await ls.features.hover.hover(params)

    # --- workspace symbols ----------------------------------------------------

    @server.feature(types.WORKSPACE_SYMBOL, advertised.SYMBOLS)
    async def workspace_symbol(
        ls: AcpLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        return await ls.features.symbols.query(params.query)

    @server.feature(types.WORKSPACE_SYMBOL_RESOLVE)
    async def workspace_symbol_resolve(
        ls: AcpLanguageServer, params: types.WorkspaceSymbol
    ) -> types.WorkspaceSymbol:
        return await ls.features.symbols.resolve(params)

    for name in advertised.COMMANDS:
        _command(server, name)


def _command(server: AcpLanguageServer, name: str) -> None:
    """``workspace/executeCommand`` for ``name``; pygls advertises exactly these."""

    @server.command(name)
    async def run(ls: AcpLanguageServer, *arguments: Any) -> object:
        return await ls.features.commands.execute(name, arguments)
