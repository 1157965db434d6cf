"""The editor, as features see it: the few things they may ask of it.

Features act on the editor through an ``Editor``, never through the
``LanguageServer``: apply an edit, show a document, say something, log,
show progress, send diagnostics, and run a task the session owns. Tests
hand features a fake one; the server hands them ``LspEditor``.

Progress is routed here too: a feature starts one with the callback that
cancels its work, and the editor's ``window/workDoneProgress/cancel``
reaches that callback without anyone knowing which feature made the token.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from lsprotocol import types

if TYPE_CHECKING:
    from lsp_server.server import AcpLanguageServer

log = logging.getLogger(__name__)

T = TypeVar("T")

OnCancel = Callable[[], Coroutine[Any, Any, object]]


class Editor(Protocol):
    def say(self, message: str, kind: types.MessageType) -> None:
        """``window/showMessage``."""

    def log(self, message: str) -> None:
        """``window/logMessage`` (the editor's log of this server)."""

    async def apply_edit(
        self, edit: types.WorkspaceEdit, label: str
    ) -> types.ApplyWorkspaceEditResult:
        """``workspace/applyEdit``; an error answer counts as not applied."""

    async def show_document(self, uri: str) -> bool:
        """``window/showDocument`` with focus; False when the editor could not."""

    async def start_progress(
        self, token: str, begin: types.WorkDoneProgressBegin, on_cancel: OnCancel
    ) -> bool:
        """Create ``token`` and begin it; False when the editor refused it.
        Cancelling it in the editor calls ``on_cancel`` (as a task)."""

    def report_progress(self, token: str, message: str, percentage: int | None = None) -> None:
        """A step of a progress begun with ``start_progress``."""

    def end_progress(self, token: str, message: str) -> None:
        """The end of a progress begun with ``start_progress``."""

    def publish(self, params_json: str) -> None:
        """``textDocument/publishDiagnostics`` with params already in JSON."""

    def refresh_diagnostics(self) -> None:
        """``workspace/diagnostic/refresh``: a pull client asks again."""

    def backed_up(self) -> bool:
        """Whether the editor is behind reading what was sent."""

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """A background task, referenced until done and cancelled at shutdown."""


def report_failure(task: asyncio.Task[Any]) -> None:
    """Log a background task's unexpected error once, when it ends: left
    unretrieved, asyncio would report it whenever the task is collected,
    from inside whatever code is running then."""
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("background task %s failed", task.get_name(), exc_info=error)


OUTPUT_BACKLOG = 256 * 1024
"""Bytes sent but not yet read by the editor beyond which the editor counts
as backed up: an answer queued behind them waits for the editor to read them all."""


class LspEditor:
    """``Editor`` over the running language server."""

    def __init__(self, server: AcpLanguageServer) -> None:
        self._server = server
        self._cancels: dict[str, OnCancel] = {}

    def say(self, message: str, kind: types.MessageType) -> None:
        self._server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log(self, message: str) -> None:
        self._server.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message=message)
        )

    async def apply_edit(
        self, edit: types.WorkspaceEdit, label: str
    ) -> types.ApplyWorkspaceEditResult:
        try:
            return await self._server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=label)
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=str(exc))

    async def show_document(self, uri: str) -> bool:
        try:
            answer = await self._server.window_show_document_async(
                types.ShowDocumentParams(uri=uri, take_focus=True)
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("could not show %s: %s", uri, exc)
            return False
        return bool(answer and answer.success)

    async def start_progress(
        self, token: str, begin: types.WorkDoneProgressBegin, on_cancel: OnCancel
    ) -> bool:
        progress = self._server.work_done_progress
        try:
            # Shielded: cancelling the waiter (at shutdown) must not cancel
            # pygls's pending request, or the editor's answer to it is then
            # reported to the editor as an error naming a cancelled Future.
            await asyncio.shield(progress.create_async(token))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # refused: the work goes on without progress
            log.info("no progress %s: %s", token, exc)
            return False
        self._cancels[token] = on_cancel
        progress.begin(token, begin)
        return True

    def report_progress(self, token: str, message: str, percentage: int | None = None) -> None:
        report = types.WorkDoneProgressReport(message=message, percentage=percentage)
        self._server.work_done_progress.report(token, report)

    def end_progress(self, token: str, message: str) -> None:
        self._cancels.pop(token, None)
        progress = self._server.work_done_progress
        progress.tokens.pop(token, None)
        progress.end(token, types.WorkDoneProgressEnd(message=message))

    def progress_cancelled(self, token: str) -> None:
        """The editor's ``window/workDoneProgress/cancel``."""
        on_cancel = self._cancels.get(token)
        if on_cancel is not None:
            self.spawn(on_cancel())

    def publish(self, params_json: str) -> None:
        self._server.notify_json(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params_json)

    def refresh_diagnostics(self) -> None:
        self._server.workspace_diagnostic_refresh(None)

    def backed_up(self) -> bool:
        return self._server.output_backlog() > OUTPUT_BACKLOG

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        return self._server.spawn(coroutine)
