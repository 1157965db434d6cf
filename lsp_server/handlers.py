"""LSP handlers: the one table from LSP methods to the session and its features.

Nothing here decides anything; each handler is one line or two. Two kinds:

- **notifications** (the document's lifecycle, settings, folders) go to the
  session, which changes its state at once, without awaiting anything;
- **requests** take a ``Snapshot`` (``ls.snapshot``) and hand it to one
  feature, which reads nothing else of the session. They run as tasks, so
  none blocks the editor, and a cancelled one stops where it awaits.

Registering them loads no feature: the options come from
``lsp_server.advertised`` and ``lsp_server.commands``, and ``ls.session`` and
``ls.features`` are built on first use, after the ``initialize`` answer
(ADR 0016).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from lsp_server import advertised, code_actions, completion
from lsp_server.backend import Prompt
from lsp_server.commands import COMMANDS
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
    def configuration_changed(
        ls: AcpLanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        ls.spawn(ls.reload_settings(params.settings))  # asks the editor, then takes them in

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: AcpLanguageServer, _: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.session.folders_changed()

    # pygls has applied each of these to its workspace before calling us.

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def opened(ls: AcpLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        ls.session.opened(document.uri, document.version, document.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def changed(ls: AcpLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.session.edited(
            uri, params.text_document.version, ls.workspace.get_text_document(uri).source
        )

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def saved(ls: AcpLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.link.wanted(Prompt.CHANGE)  # the backend away: a save tries it again at once
        ls.session.saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def closed(ls: AcpLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.session.closed(params.text_document.uri)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancelled(
        ls: AcpLanguageServer, params: types.WorkDoneProgressCancelParams
    ) -> None:
        ls.editor.progress_cancelled(str(params.token))

    # --- diagnostics ----------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, advertised.DIAGNOSTICS)
    async def document_diagnostic(
        ls: AcpLanguageServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        snapshot = await ls.snapshot(params.text_document.uri)
        return ls.features.diagnostics.document_report(snapshot, params.previous_result_id)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(
        ls: AcpLanguageServer, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        snapshot = await ls.snapshot()
        return ls.features.diagnostics.workspace_report(snapshot, params.previous_result_ids)

    # --- code actions and commands --------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, advertised.CODE_ACTIONS)
    async def code_action(
        ls: AcpLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        snapshot = await ls.snapshot(params.text_document.uri)
        return code_actions.offered(snapshot, params, ls.features)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(
        ls: AcpLanguageServer, action: types.CodeAction
    ) -> types.CodeAction:
        snapshot = await ls.snapshot(code_actions.uri_of(action))
        return ls.features.fixes.resolve(snapshot, action)

    # --- completion -----------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, advertised.COMPLETION)
    async def complete(
        ls: AcpLanguageServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        snapshot = await ls.snapshot(params.text_document.uri, listed=True)
        return completion.completed(snapshot, params.position, ls.features)

    # --- hover ----------------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: AcpLanguageServer, params: types.HoverParams) -> types.Hover | None:
        snapshot = await ls.snapshot(params.text_document.uri)
        return await ls.features.hover.hover(snapshot, params.position)

    # --- workspace symbols ----------------------------------------------------

    @server.feature(types.WORKSPACE_SYMBOL, advertised.SYMBOLS)
    async def workspace_symbol(
        ls: AcpLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        snapshot = await ls.snapshot()
        return await ls.features.symbols.query(snapshot, params.query)

    @server.feature(types.WORKSPACE_SYMBOL_RESOLVE)
    async def workspace_symbol_resolve(
        ls: AcpLanguageServer, params: types.WorkspaceSymbol
    ) -> types.WorkspaceSymbol:
        snapshot = await ls.snapshot()
        return await ls.features.symbols.resolve(snapshot, params)

    for name in COMMANDS:
        _command(server, name)


def _command(server: AcpLanguageServer, name: str) -> None:
    """``workspace/executeCommand`` for ``name``; pygls advertises exactly these."""

    @server.command(name)
    async def run(ls: AcpLanguageServer, *arguments: Any) -> object:
        return await ls.execute_command(name, arguments)
