"""Validations: run them from the editor, on save or while typing, with progress.

- "Run validations on *file*" / "on the whole resource" (``acp.runValidations``);
- ``runOn``: a save starts a run of the saved file at once, an edit (with
  ``runOn: change``) after ``debounceMs`` of quiet; a document saved or
  edited before it was placed runs once it is; a sandbox copy is its
  plan's to validate, never the resource's;
- every run of a resource in play shows as work-done progress (``progress``
  setting); cancelling it cancels the run in the backend.

Starting and cancelling runs change no resource and no plan.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

from lsprotocol import types

from acp_client.events import Event, ValidationCompleted, ValidationResultEvent, ValidationStarted
from lsp_server.calls import BackendCalls
from lsp_server.code_actions import ActionRequest, action
from lsp_server.commands import RUN_VALIDATIONS, VALIDATE_KIND, RunArgs
from lsp_server.editor import Editor
from lsp_server.features import Feature, Runner
from lsp_server.features.validations.progress import RunProgress
from lsp_server.features.validations.runs import RunScheduler
from lsp_server.roots import Placement
from lsp_server.settings import RunOn
from lsp_server.snapshot import Snapshot


class Validations(Feature):
    def __init__(self, editor: Editor, calls: BackendCalls) -> None:
        super().__init__(editor, calls)
        self._progress = RunProgress(editor, self._cancel_run)
        self._runs = RunScheduler(self._start_run, editor.spawn)
        self._run_when_placed: set[str] = set()  # saved or edited before being placed
        self._placed_due: dict[str, set[str]] = {}  # their paths once placed, by resource
        self.runs: Mapping[str, Runner] = {RUN_VALIDATIONS: self.run}

    def start(self, snapshot: Snapshot) -> None:
        self.editor.spawn(self._progress.run())

    def close(self) -> None:
        self._runs.close()

    def backend_lost(self) -> None:
        self._progress.interrupt()

    # --- the listing and the command ---------------------------------------

    def actions(self, request: ActionRequest) -> Iterable[types.CodeAction]:
        placement = request.snapshot.placement
        if not request.wanted(VALIDATE_KIND) or placement is None or placement.sandbox:
            return
        resource_id, path = placement.resource.id, placement.logical_path
        name = path.rsplit("/", 1)[-1]
        yield action(
            f"Run validations on {name}", RUN_VALIDATIONS, RunArgs(resource_id, paths=(path,))
        )
        yield action("Run validations on the whole resource", RUN_VALIDATIONS, RunArgs(resource_id))

    async def run(self, snapshot: Snapshot, args: object) -> object:
        assert isinstance(args, RunArgs)
        run = await snapshot.connected().validation_run(args.resource_id, paths=args.paths)
        return {"run_id": run.run_id, "validations": list(run.validations)}

    # --- runOn -------------------------------------------------------------

    def document_saved(self, snapshot: Snapshot) -> None:
        if snapshot.settings.run_on is not RunOn.SAVE or snapshot.uri is None:
            return
        placement = snapshot.placement
        if placement is None:
            self._run_when_placed.add(snapshot.uri)  # e.g. saved before the backend connected
        elif not placement.sandbox:
            self._run_now(placement.resource.id, {placement.logical_path})

    def document_edited(self, snapshot: Snapshot) -> None:
        settings = snapshot.settings
        if settings.run_on is not RunOn.CHANGE or snapshot.uri is None:
            return
        placement = snapshot.placement
        if placement is None:
            self._run_when_placed.add(snapshot.uri)
        elif not placement.sandbox:
            delay = settings.debounce_ms / 1000
            self._runs.later(placement.resource.id, placement.logical_path, delay)

    def document_placed(self, snapshot: Snapshot) -> None:
        placement = snapshot.placement
        if snapshot.uri in self._run_when_placed and placement is not None:
            self._run_when_placed.discard(snapshot.uri)
            if not placement.sandbox:
                # Documents placed together (a resync) make one run a resource.
                if not self._placed_due:
                    asyncio.get_running_loop().call_soon(self._run_placed)
                paths = self._placed_due.setdefault(placement.resource.id, set())
                paths.add(placement.logical_path)

    def _run_placed(self) -> None:
        due, self._placed_due = self._placed_due, {}
        for resource_id, paths in due.items():
            self._run_now(resource_id, paths)

    def document_closed(self, uri: str, placement: Placement | None) -> None:
        self._run_when_placed.discard(uri)

    def _run_now(self, resource_id: str, paths: set[str]) -> None:
        self.editor.spawn(self._runs.now(resource_id, frozenset(paths)))

    async def _start_run(self, resource_id: str, paths: frozenset[str]) -> None:
        client = self.calls.client
        if client is not None:
            await self.calls.guarded(client.validation_run(resource_id, paths=tuple(sorted(paths))))

    # --- progress ----------------------------------------------------------

    def event(self, event: Event, snapshot: Snapshot) -> None:
        if not isinstance(event, ValidationStarted | ValidationResultEvent | ValidationCompleted):
            return
        resource_id = (
            event.result.resource_id
            if isinstance(event, ValidationResultEvent)
            else event.resource_id
        )
        in_play = any(resource.id == resource_id for resource in snapshot.resources)
        if in_play and snapshot.settings.progress and snapshot.support.work_done_progress:
            self._progress.observe(event)

    async def _cancel_run(self, run_id: str) -> None:
        client = self.calls.client
        if client is not None:
            await self.calls.guarded(client.validation_cancel(run_id))
