"""Validation runs as ``window/workDoneProgress``; cancelling one cancels the run.

Progress updates go through one queue and one worker so that creating a
token (a round trip to the editor) never delays diagnostics and never
reorders a run's begin / report / end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from lsprotocol.types import WorkDoneProgressBegin

from acp_client.events import ValidationCompleted, ValidationResultEvent, ValidationStarted
from lsp_server.editor import Editor

log = logging.getLogger(__name__)

RunEvent = ValidationStarted | ValidationResultEvent | ValidationCompleted
CancelRun = Callable[[str], Coroutine[Any, Any, object]]


class _Interrupted:
    """The backend went away: no run it was doing will report its end."""


INTERRUPTED_MESSAGE = "interrupted: the ACP backend went away"


@dataclass
class _Run:
    token: str
    total: int
    done: int = 0


class RunProgress:
    def __init__(self, editor: Editor, cancel_run: CancelRun) -> None:
        self._editor = editor
        self._cancel_run = cancel_run
        self._runs: dict[str, _Run] = {}
        self._queue: asyncio.Queue[RunEvent | _Interrupted] = asyncio.Queue()

    def observe(self, event: RunEvent) -> None:
        self._queue.put_nowait(event)

    def interrupt(self) -> None:
        """End every run's progress as interrupted (in order with the rest)."""
        self._queue.put_nowait(_Interrupted())

    async def run(self) -> None:
        """The worker: call once, as a background task."""
        while True:
            event = await self._queue.get()
            try:
                await self._show(event)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("could not show progress for %s", type(event).__name__)

    async def _show(self, event: RunEvent | _Interrupted) -> None:
        if isinstance(event, _Interrupted):
            for interrupted in self._runs.values():
                self._editor.end_progress(interrupted.token, INTERRUPTED_MESSAGE)
            self._runs.clear()
            return
        if isinstance(event, ValidationStarted):
            token = f"acp-run-{event.run_id}"
            begin = WorkDoneProgressBegin(
                title="Validating",
                message=", ".join(event.validations),
                cancellable=True,
                percentage=0,
            )
            run_id = event.run_id
            if await self._editor.start_progress(token, begin, lambda: self._cancel_run(run_id)):
                self._runs[run_id] = _Run(token, max(1, len(event.validations)))
            return
        run = self._runs.get(
            event.run_id if isinstance(event, ValidationCompleted) else event.result.run_id
        )
        if run is None:
            return  # started before this session was listening, or refused a token
        if isinstance(event, ValidationResultEvent):
            run.done += 1
            verdict = "passed" if event.result.passed else "failed"
            percentage = min(100, run.done * 100 // run.total)
            self._editor.report_progress(
                run.token, f"{event.result.validation} {verdict}", percentage
            )
            return
        del self._runs[event.run_id]
        summary = event.summary
        failed = summary.required_failed + summary.informational_failed
        self._editor.end_progress(run.token, f"{failed} failed")
