"""Plans: propose a fix as a plan, preview, apply, cancel, re-run its validations.

Offered on the files a plan touches (``actions``) and run as ``acp.*``
commands (``runs``). Whether a plan can be applied is the contract's rule
(``acp_client.appliable``), asked by the listing and by the apply alike.

Applying goes through the editor, not behind its back: the previewed change
set becomes a ``WorkspaceEdit`` of versioned document edits (annotated
``needsConfirmation`` where the editor can show a refactor preview), sent
with ``workspace/applyEdit``; only once the editor has applied it is the
apply recorded with the backend (``plan.apply`` with the previewed hash and
``applied_by_client``), so the plan's state and events stay true. An editor
without ``applyEdit`` (or one that cannot create, delete or rename files
when the plan does) gets the backend-side apply, refused while any target
is open with unsaved changes: an unsaved edit is never overwritten on disk.
Every refusal is one message naming what to do; nothing is written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from lsprotocol import types

from acp_client.appliable import why_not_appliable
from acp_client.client import AcpClient
from acp_client.errors import AcpError, OutsideRoot, TransportError
from acp_client.events import Event, PlanChanged
from acp_client.jail import jailed
from acp_client.models import (
    ChangeKind,
    Plan,
    PlanPreview,
    PlanState,
)
from acp_client.paths import path_to_uri
from acp_client.text import holds
from lsp_server.calls import BackendCalls
from lsp_server.code_actions import ActionRequest
from lsp_server.commands import (
    APPLY_PLAN,
    CANCEL_PLAN,
    PREVIEW_PLAN,
    PROPOSE_FIX,
    RERUN_PLAN,
    PlanArgs,
    ProposeArgs,
)
from lsp_server.editor import Editor
from lsp_server.features import Feature, Runner
from lsp_server.features.plans.listing import listed
from lsp_server.features.plans.progress import PlanProgress
from lsp_server.roots import Placement
from lsp_server.snapshot import FileReader, Snapshot
from lsp_server.workspace_edits import (
    Annotation,
    EditorCannot,
    EditorFile,
    EditSupport,
    Stale,
    plan_edit,
)

log = logging.getLogger(__name__)

Info, Warning_, Error = types.MessageType.Info, types.MessageType.Warning, types.MessageType.Error
NOT_APPLIED = {"applied": False}


@dataclass
class _InEditor:
    """A plan this session applied in the editor, until its change is on
    disk or gone from the buffers (``plan.settle``)."""

    resource_id: str
    bases: Mapping[str, str | None]  # each file's digest before the plan (None: absent)
    files: FileReader  # the files as the editor has them now
    since: datetime  # when the backend recorded it in_editor
    in_buffers: bool = True


class Plans(Feature):
    def __init__(self, editor: Editor, calls: BackendCalls) -> None:
        super().__init__(editor, calls)
        self.progress = PlanProgress(editor, self._cancel)
        self._in_editor: dict[str, _InEditor] = {}
        self.runs: Mapping[str, Runner] = {
            PROPOSE_FIX: self.propose,
            PREVIEW_PLAN: self.preview,
            APPLY_PLAN: self.apply,
            CANCEL_PLAN: self.cancel,
            RERUN_PLAN: self.rerun,
        }

    def event(self, event: Event, snapshot: Snapshot) -> None:
        if isinstance(event, PlanChanged):
            self.progress.changed(event.plan)
            held = self._in_editor.get(event.plan.id)
            settled = event.plan.state is not PlanState.IN_EDITOR
            if held is not None and settled and event.plan.updated_at > held.since:
                del self._in_editor[event.plan.id]  # on disk, or undone (not an older event)

    # --- a plan applied in the editor, until saved or undone ---------------

    def document_saved(self, snapshot: Snapshot) -> None:
        self._settle_touched(snapshot, always=True)

    def document_edited(self, snapshot: Snapshot) -> None:
        self._settle_touched(snapshot, always=False)

    def document_closed(self, uri: str, placement: Placement | None) -> None:
        for plan_id, held in list(self._in_editor.items()):
            if placement is not None and placement.logical_path in held.bases:
                self._settle_if_moved(plan_id, held)  # unsaved, the change went with the buffer

    def _settle_touched(self, snapshot: Snapshot, *, always: bool) -> None:
        """After a save of a file of a plan applied in the editor (always), or
        an edit that brings its buffers back to what they were before the
        plan (an undo) or away from that again: tell the backend, which
        looks at the disk (ADR 0023)."""
        placement = snapshot.placement
        if placement is None:
            return
        for plan_id, held in list(self._in_editor.items()):
            if placement.logical_path not in held.bases:
                continue
            if always:
                held.in_buffers = not self._undone(held)
                self._settle(plan_id, in_buffers=held.in_buffers)
            else:
                self._settle_if_moved(plan_id, held)

    def _settle_if_moved(self, plan_id: str, held: _InEditor) -> None:
        in_buffers = not self._undone(held)
        if in_buffers != held.in_buffers:
            held.in_buffers = in_buffers
            self._settle(plan_id, in_buffers=in_buffers)

    def _undone(self, held: _InEditor) -> bool:
        """Whether every file is back as it was before the plan (in its buffer,
        or on disk where no buffer holds it any more)."""
        return all(
            _holds(held.files(held.resource_id, path), base) for path, base in held.bases.items()
        )

    def _settle(self, plan_id: str, *, in_buffers: bool) -> None:
        client = self.calls.client
        if client is not None:
            self.editor.spawn(
                self.calls.guarded(client.plan_settle(plan_id, in_buffers=in_buffers))
            )

    async def _cancel(self, plan_id: str) -> None:
        """The editor cancelled a proposal's progress."""
        client = self.calls.client
        if client is not None:
            await self.calls.guarded(client.plan_cancel(plan_id))

    # --- the listing -------------------------------------------------------

    def actions(self, request: ActionRequest) -> Iterable[types.CodeAction]:
        return listed(request)

    # --- commands ----------------------------------------------------------

    async def propose(self, snapshot: Snapshot, args: object) -> object:
        assert isinstance(args, ProposeArgs)
        client = snapshot.connected()
        plan = await client.plan_execute(args.resource_id, args.validation, paths=args.paths)
        with_progress = snapshot.support.work_done_progress
        self.progress.follow(plan, f"Proposing a fix with {args.validation}", with_progress)
        return plan.model_dump(mode="json")

    async def preview(self, snapshot: Snapshot, args: object) -> object:
        """Name the files in a message, put the diff in the log, and, when
        the plan has a sandbox and the editor can show a document, open the
        first changed file's sandbox copy: the proposed text, with the
        plan's own diagnostics on it."""
        assert isinstance(args, PlanArgs)
        client = snapshot.connected()
        plan = await client.plan_get(args.plan_id)
        preview = await client.plan_preview(args.plan_id)
        files = ", ".join(change.path for change in preview.changes) or "no files"
        moved = f" Changed since it was made: {', '.join(preview.moved)}." if preview.moved else ""
        self.editor.say(
            f"Plan “{plan.title}” ({plan.state}) changes {files}.{moved} The diff is in the "
            "language server's log; “Apply plan” applies it.",
            Info,
        )
        for change in preview.changes:
            self.editor.log(f"Plan “{plan.title}”, {change.path}:\n{change.diff}")
        shown = [c.path for c in preview.changes if c.kind is not ChangeKind.DELETE]
        if plan.sandbox_root is not None and shown and snapshot.support.show_document:
            try:
                copy = jailed(plan.sandbox_root, shown[0])
            except OutsideRoot as exc:
                self.editor.say(f"Plan “{plan.title}”: not opened: {exc}.", Warning_)
            else:
                await self.editor.show_document(path_to_uri(copy))
        return preview.model_dump(mode="json")

    async def cancel(self, snapshot: Snapshot, args: object) -> object:
        assert isinstance(args, PlanArgs)
        plan = await snapshot.connected().plan_cancel(args.plan_id)
        self.editor.say(f"Plan “{plan.title}” cancelled.", Info)
        return plan.model_dump(mode="json")

    async def rerun(self, snapshot: Snapshot, args: object) -> object:
        assert isinstance(args, PlanArgs)
        client = snapshot.connected()
        plan = await client.plan_get(args.plan_id)
        run = await client.validation_run(plan.resource_id, plan=plan.id)
        return {"run_id": run.run_id, "validations": list(run.validations)}

    async def apply(self, snapshot: Snapshot, args: object) -> object:
        assert isinstance(args, PlanArgs)
        client = snapshot.connected()
        plan = await client.plan_get(args.plan_id)
        refusal = why_not_appliable(plan, args.force)
        if refusal is not None:
            remedy = (
                "Fix that and propose again, or choose “Apply plan … anyway” to force it (recorded)"
                if plan.state is PlanState.CONSTRAINED
                else refusal.remedy[:1].upper() + refusal.remedy[1:]
            )
            self.editor.say(
                f"Plan “{plan.title}” was not applied: {refusal.reason}. Nothing was written. "
                f"{remedy}.",
                Warning_,
            )
            return NOT_APPLIED
        preview = await client.plan_preview(plan.id)
        if preview.moved:
            self.editor.say(
                f"Plan “{plan.title}” was not applied (CONFLICT): {', '.join(preview.moved)} "
                f"changed since it was made. Nothing was written. {AGAIN}.",
                Warning_,
            )
            return NOT_APPLIED
        # From here on the files as they are now, not as the request found
        # them: the edit is checked against them, and the editor re-checks
        # each buffer's version.
        targets: dict[str, EditorFile] = {}
        for path in {c.path for c in preview.changes} | {
            c.old_path for c in preview.changes if c.old_path
        }:
            target = snapshot.files(plan.resource_id, path)
            if target is None:
                self.editor.say(f"Plan “{plan.title}”: {path} is not in a known resource.", Error)
                return NOT_APPLIED
            targets[path] = target
        escape = _escape(snapshot, plan, targets)
        if escape is not None:  # a backend is a peer: where it writes is checked here too
            self.editor.say(
                f"Plan “{plan.title}” was not applied: {escape}. Nothing was written.", Error
            )
            return NOT_APPLIED
        try:
            if snapshot.support.apply_edit:
                annotation = Annotation(f"acp-plan-{plan.id}", plan.title, plan.description)
                support = EditSupport.of(snapshot.support)
                edit = plan_edit(preview.changes, targets, snapshot.encoding, support, annotation)
                return await self._apply_in_editor(
                    client, plan, edit, preview, args, files=snapshot.files
                )
        except EditorCannot as exc:
            log.info("plan %s applied by the backend: %s", plan.id, exc)
        except Stale as exc:
            self.editor.say(_stale_message(plan, exc), Warning_)
            return NOT_APPLIED
        return await self._apply_on_disk(client, plan, targets, preview.plan_hash, args)

    async def _apply_in_editor(
        self,
        client: AcpClient,
        plan: Plan,
        edit: types.WorkspaceEdit,
        preview: PlanPreview,
        args: PlanArgs,
        *,
        files: FileReader,
    ) -> object:
        answer = await self.editor.apply_edit(edit, f"Apply plan “{plan.title}”")
        if not answer.applied:
            why = f" ({answer.failure_reason})" if answer.failure_reason else ""
            # VS Code's Refactor Preview opens such changes unticked: Apply
            # with none ticked applies nothing and answers "not applied".
            confirm = any(
                note.needs_confirmation for note in (edit.change_annotations or {}).values()
            )
            tick = " If it showed a preview, tick its changes before Apply." if confirm else ""
            self.editor.say(
                f"The editor did not apply plan “{plan.title}”{why}. Nothing was written; "
                f"the plan is still open.{tick}",
                Warning_,
            )
            return NOT_APPLIED
        try:
            done = await client.plan_apply(
                plan.id, preview.plan_hash, force=args.force, applied_by_client=True
            )
        except AcpError as exc:
            self.editor.say(
                f"Plan “{plan.title}” is in the editor's buffers but the backend refused to "
                f"record it: {exc}. Undo the edit in the editor to go back.",
                Warning_,
            )
            return NOT_APPLIED
        self._in_editor[plan.id] = _InEditor(
            plan.resource_id,
            {change.old_path or change.path: change.base_sha256 for change in preview.changes},
            files,
            done.updated_at,
        )
        count = len(plan.paths)
        self.editor.say(
            f"Applied plan “{plan.title}” in the editor ({count} file"
            f"{'' if count == 1 else 's'}); save to keep it (until then it is recorded as "
            "applied in the editor, not on disk; undoing it before saving withdraws it).",
            Info,
        )
        return {"applied": True, "plan": done.model_dump(mode="json")}

    async def _apply_on_disk(
        self,
        client: AcpClient,
        plan: Plan,
        targets: Mapping[str, EditorFile],
        plan_hash: str,
        args: PlanArgs,
    ) -> object:
        dirty = sorted(path for path, target in targets.items() if target.dirty)
        if dirty:
            self.editor.say(
                f"Plan “{plan.title}” was not applied: {', '.join(dirty)} "
                f"{'has' if len(dirty) == 1 else 'have'} unsaved changes. Nothing was written. "
                "Save or revert, then apply again.",
                Warning_,
            )
            return NOT_APPLIED
        try:
            done = await client.plan_apply(plan.id, plan_hash, force=args.force)
        except TransportError:
            raise
        except AcpError as exc:
            self.editor.say(
                f"Plan “{plan.title}” was not applied ({exc.kind}): {exc}. Nothing was written.",
                Warning_,
            )
            return NOT_APPLIED
        self.editor.say(
            f"Applied plan “{plan.title}” on disk: {', '.join(done.paths)}. The editor shows "
            "the files as they are on disk once it reloads them.",
            Info,
        )
        return {"applied": True, "plan": done.model_dump(mode="json")}


def _escape(snapshot: Snapshot, plan: Plan, targets: Mapping[str, EditorFile]) -> str | None:
    """Why one of a plan's targets, symlinks followed, leaves its resource's
    root or enters its ``.git`` (``acp_client.jail``); None when none does."""
    root = next((r.root for r in snapshot.resources if r.id == plan.resource_id), None)
    if root is None:
        return f"its resource {plan.resource_id} is not in play"
    for path in targets:
        try:
            jailed(root, path)
        except OutsideRoot as exc:
            return str(exc)
    return None


def _holds(file: EditorFile | None, expected: str | None) -> bool:
    """Whether the buffer (or the disk) holds the text ``expected`` names."""
    if file is None or file.text is None:
        return expected is None
    return expected is not None and holds(file.text, expected)


def _stale_message(plan: Plan, exc: Stale) -> str:
    """A refusal whose advice leads somewhere: saving unsaved changes to a
    file the plan fits would make it stop fitting, so the way to apply it is
    to revert them."""
    what = (
        "To apply it, revert the unsaved changes (saving them makes the plan no longer "
        "fit the file; then propose again)"
        if exc.unsaved
        else AGAIN
    )
    return (
        f"Plan “{plan.title}” was not applied (CONFLICT): {exc.path}: {exc.reason}. "
        f"Nothing was written. {what}."
    )


AGAIN = "Propose again (“Propose again with …” in the code actions), or ask the plan's author"
