"""Validation runs as ``window/workDoneProgress``; cancelling one cancels the run.

Progress updates go through one queue and one worker so that creating a
token (a round trip to the editor) never delays diagnostics and never
reorders a run's begin / report / end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from lsprotocol.types import WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport
from pygls.progress import Progress

from acp_client.events import ValidationCompleted, ValidationResultEvent, ValidationStarted

log = logging.getLogger(__name__)

RunEvent = ValidationStarted | ValidationResultEvent | ValidationCompleted


class _Interrupted:
    """The backend went away: no run it was doing will report its end."""


INTERRUPTED_MESSAGE = "interrupted: the ACP backend went away"


@dataclass
class _Run:
    token: str
    total: int
    done: int = 0


class RunProgress:
    def __init__(self, progress: Progress, cancel_run: Callable[[str], Awaitable[object]]) -> None:
        self._progress = progress
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

    async def cancel(self, token: str) -> None:
        """The editor cancelled a progress: cancel the run it shows."""
        for run_id, run in self._runs.items():
            if run.token == token:
                await self._cancel_run(run_id)
                return

    async def _show(self, event: RunEvent | _Interrupted) -> None:
        if isinstance(event, _Interrupted):
            for interrupted in self._runs.values():
                self._end(interrupted, INTERRUPTED_MESSAGE)
            self._runs.clear()
            return
        if isinstance(event, ValidationStarted):
            token = f"acp-run-{event.run_id}"
            # Shielded: cancelling this worker (at shutdown) must not cancel
            # pygls's pending request, or the editor's answer to it is then
            # reported to the editor as an error naming a cancelled Future.
            await asyncio.shield(self._progress.create_async(token))  # refused: no progress
            self._runs[event.run_id] = _Run(token, max(1, len(event.validations)))
            self._progress.begin(
                token,
                WorkDoneProgressBegin(
                    title="Validating",
                    message=", ".join(event.validations),
                    cancellable=True,
                    percentage=0,
                ),
            )
            return
        run = self._runs.get(
            event.run_id if isinstance(event, ValidationCompleted) else event.result.run_id
        )
        if run is None:
            return  # started before this session was listening
        if isinstance(event, ValidationResultEvent):
            run.done += 1
            verdict = "passed" if event.result.passed else "failed"
            self._progress.report(
                run.token,
                WorkDoneProgressReport(
                    message=f"{event.result.validation} {verdict}",
                    percentage=min(100, run.done * 100 // run.total),
                ),
            )
            return
        del self._runs[event.run_id]
        summary = event.summary
        self._end(run, f"{summary.required_failed + summary.informational_failed} failed")

    def _end(self, run: _Run, message: str) -> None:
        self._progress.tokens.pop(run.token, None)
        self._progress.end(run.token, WorkDoneProgressEnd(message=message))
