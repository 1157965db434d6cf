"""``workspace/executeCommand``: the ``acp.*`` commands, the only code that changes anything.

Code actions never change state themselves: they name one of these
commands, or (with ``codeAction/resolve``) carry an edit the editor applies.

Applying a plan goes through the editor, not behind its back: the
previewed change set becomes a ``WorkspaceEdit`` of versioned document
edits (annotated ``needsConfirmation`` where the editor can show a refactor
preview), sent with ``workspace/applyEdit``; only once the editor has
applied it is the apply recorded with the backend (``plan.apply`` with the
previewed hash and ``applied_by_client``), so the plan's state and events
stay true. An editor without ``applyEdit`` (or one that cannot create,
delete or rename files when the plan does) gets the backend-side apply,
refused while any target is open with unsaved changes: an unsaved edit is
never overwritten on disk. Every refusal is one message naming what to do;
nothing is written.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pydantic import ValidationError

from acp_client.client import AcpClient
from acp_client.errors import AcpError, TransportError
from acp_client.events import Event, PlanChanged
from acp_client.models import ChangeKind, Plan, PlanState
from acp_client.paths import path_to_uri
from lsp_server.advertised import (
    APPLY_FIX,
    APPLY_PLAN,
    CANCEL_PLAN,
    FIX_ALL,
    PREVIEW_PLAN,
    PROPOSE_FIX,
    RERUN_PLAN,
    RUN_VALIDATIONS,
)
from lsp_server.features import Feature
from lsp_server.features.code_actions.listing import (
    OPEN_PLAN,
    Arguments,
    FixAllArgs,
    FixArgs,
    PlanArgs,
    ProposeArgs,
    RunArgs,
)
from lsp_server.workspace_edits import Annotation, Stale, Target, Unsupported, plan_edit

if TYPE_CHECKING:
    from lsp_server.features.code_actions import CodeActions
    from lsp_server.server import AcpLanguageServer

log = logging.getLogger(__name__)

Info, Warning_, Error = types.MessageType.Info, types.MessageType.Warning, types.MessageType.Error


@dataclass(frozen=True, slots=True)
class Command:
    args: type[Arguments]
    run: Callable[[Any], Awaitable[object]]


class Commands(Feature):
    def __init__(self, session: AcpLanguageServer, code_actions: CodeActions) -> None:
        super().__init__(session)
        self._actions = code_actions
        self.progress = PlanProgress(session, self._cancel_plan)
        self.table: Mapping[str, Command] = {
            RUN_VALIDATIONS: Command(RunArgs, self.run_validations),
            APPLY_FIX: Command(FixArgs, self.apply_fix),
            FIX_ALL: Command(FixAllArgs, self.apply_fix),
            PROPOSE_FIX: Command(ProposeArgs, self.propose_fix),
            PREVIEW_PLAN: Command(PlanArgs, self.preview_plan),
            APPLY_PLAN: Command(PlanArgs, self.apply_plan),
            CANCEL_PLAN: Command(PlanArgs, self.cancel_plan),
            RERUN_PLAN: Command(PlanArgs, self.rerun_plan),
        }

    async def on_event(self, client: AcpClient, event: Event) -> None:
        if isinstance(event, PlanChanged):
            self.progress.changed(event.plan)

    def _say(self, message: str, kind: types.MessageType) -> None:
        self.session.say(message, kind)

    async def execute(self, name: str, arguments: Sequence[object] | None) -> object:
        """Run a command; its arguments are one object (``code_actions.listing``)."""
        command = self.table.get(name)
        if command is None:
            raise ValueError(f"unknown command {name!r}")
        try:
            args = command.args.model_validate((arguments or [{}])[0])
        except ValidationError as exc:
            raise ValueError(f"bad arguments for {name}: {exc.errors()[0]['msg']}") from exc
        try:
            return await command.run(args)
        except TransportError as exc:
            self._say(f"ACP backend unavailable: {exc}. Nothing was changed.", Error)
        except AcpError as exc:
            self._say(f"ACP refused {name}: {exc}. Nothing was changed.", Error)
        return None

    def _backend(self) -> AcpClient:
        client = self.session.link.client
        if client is None:
            raise TransportError("not connected yet", remedy="try again in a moment")
        return client

    # --- validations -------------------------------------------------------

    async def run_validations(self, args: RunArgs) -> object:
        run = await self._backend().validation_run(args.resource_id, paths=args.paths)
        return {"run_id": run.run_id, "validations": list(run.validations)}

    async def rerun_plan(self, args: PlanArgs) -> object:
        client = self._backend()
        plan = await client.plan_get(args.plan_id)
        run = await client.validation_run(plan.resource_id, plan=plan.id)
        return {"run_id": run.run_id, "validations": list(run.validations)}

    # --- quick fixes (no plan: the tool's own edit, in the buffer) ---------

    async def apply_fix(self, args: FixArgs | FixAllArgs) -> object:
        """For editors without ``codeAction/resolve``: the same edit, sent."""
        if not self.session.support.apply_edit:
            self._say("This editor cannot apply edits a language server sends.", Warning_)
            return {"applied": False}
        edit = self._actions.fix_edit(args)
        if edit is None:
            self._say(
                "That fix no longer fits the file (it changed since the validation ran). "
                "Save to run the validations again, then pick the fix anew.",
                Warning_,
            )
            return {"applied": False}
        answer = await self._apply_edit(edit, "Fix")
        return {"applied": answer.applied}

    # --- plans -------------------------------------------------------------

    async def propose_fix(self, args: ProposeArgs) -> object:
        plan = await self._backend().plan_execute(
            args.resource_id, args.validation, paths=args.paths
        )
        self.progress.follow(plan, f"Proposing a fix with {args.validation}")
        return plan.model_dump(mode="json")

    async def preview_plan(self, args: PlanArgs) -> object:
        """Name the files in a message, put the diff in the log, and, when
        the plan has a sandbox and the editor can show a document, open the
        first changed file's sandbox copy: the proposed text, with the
        plan's own diagnostics on it."""
        client = self._backend()
        plan = await client.plan_get(args.plan_id)
        preview = await client.plan_preview(args.plan_id)
        files = ", ".join(change.path for change in preview.changes) or "no files"
        moved = f" Changed since it was made: {', '.join(preview.moved)}." if preview.moved else ""
        self._say(
            f"Plan “{plan.title}” ({plan.state}) changes {files}.{moved} The diff is in the "
            "language server's log; “Apply plan” applies it.",
            Info,
        )
        for change in preview.changes:  # the editor's log of this server (window/logMessage)
            self.session.log_to_client(f"Plan “{plan.title}”, {change.path}:\n{change.diff}")
        shown = [c.path for c in preview.changes if c.kind is not ChangeKind.DELETE]
        if plan.sandbox_root is not None and shown and self.session.support.show_document:
            copy = path_to_uri(os.path.join(plan.sandbox_root, shown[0]))
            try:
                await self.session.window_show_document_async(
                    types.ShowDocumentParams(uri=copy, take_focus=True)
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the editor could not open it: the message stands
                log.info("could not show %s: %s", copy, exc)
        return preview.model_dump(mode="json")

    async def cancel_plan(self, args: PlanArgs) -> object:
        plan = await self._backend().plan_cancel(args.plan_id)
        self._say(f"Plan “{plan.title}” cancelled.", Info)
        return plan.model_dump(mode="json")

    async def apply_plan(self, args: PlanArgs) -> object:
        client = self._backend()
        plan = await client.plan_get(args.plan_id)
        refusal = _refusal(plan, args.force)
        if refusal is not None:
            self._say(refusal, Warning_)
            return {"applied": False}
        preview = await client.plan_preview(plan.id)
        if preview.moved:
            self._say(
                f"Plan “{plan.title}” was not applied (CONFLICT): {', '.join(preview.moved)} "
                "changed since it was made. Nothing was written. Ask for a new plan "
                "(“Propose fix” again, or its author).",
                Warning_,
            )
            return {"applied": False}
        targets: dict[str, Target] = {}
        for path in {c.path for c in preview.changes} | {
            c.old_path for c in preview.changes if c.old_path
        }:
            target = self._actions.target(plan.resource_id, path)
            if target is None:
                self._say(f"Plan “{plan.title}”: {path} is not in a known resource.", Error)
                return {"applied": False}
            targets[path] = target
        try:
            if self.session.support.apply_edit:
                annotation = Annotation(f"acp-plan-{plan.id}", plan.title, plan.description)
                support = self._actions.edit_support()
                encoding = self.session.encoding
                edit = plan_edit(preview.changes, targets, encoding, support, annotation)
                return await self._apply_in_editor(client, plan, edit, preview.plan_hash, args)
        except Unsupported as exc:
            log.info("plan %s applied by the backend: %s", plan.id, exc)
        except Stale as exc:
            self._say(_stale_message(plan, exc), Warning_)
            return {"applied": False}
        return await self._apply_on_disk(client, plan, targets, preview.plan_hash, args)

    async def _apply_in_editor(
        self,
        client: AcpClient,
        plan: Plan,
        edit: types.WorkspaceEdit,
        plan_hash: str,
        args: PlanArgs,
    ) -> object:
        answer = await self._apply_edit(edit, f"Apply plan “{plan.title}”")
        if not answer.applied:
            why = f" ({answer.failure_reason})" if answer.failure_reason else ""
            self._say(
                f"The editor did not apply plan “{plan.title}”{why}. Nothing was written; "
                "the plan is still open.",
                Warning_,
            )
            return {"applied": False}
        try:
            done = await client.plan_apply(
                plan.id, plan_hash, force=args.force, applied_by_client=True
            )
        except AcpError as exc:
            self._say(
                f"Plan “{plan.title}” is in the editor's buffers but the backend refused to "
                f"record it: {exc}. Undo the edit in the editor to go back.",
                Warning_,
            )
            return {"applied": False}
        self._say(
            f"Applied plan “{plan.title}” in the editor ({len(plan.paths)} file"
            f"{'' if len(plan.paths) == 1 else 's'}); save to keep it.",
            Info,
        )
        return {"applied": True, "plan": done.model_dump(mode="json")}

    async def _apply_on_disk(
        self,
        client: AcpClient,
        plan: Plan,
        targets: Mapping[str, Target],
        plan_hash: str,
        args: PlanArgs,
    ) -> object:
        dirty = sorted(path for path, target in targets.items() if target.dirty)
        if dirty:
            self._say(
                f"Plan “{plan.title}” was not applied: {', '.join(dirty)} "
                f"{'has' if len(dirty) == 1 else 'have'} unsaved changes. Nothing was written. "
                "Save or revert, then apply again.",
                Warning_,
            )
            return {"applied": False}
        try:
            done = await client.plan_apply(plan.id, plan_hash, force=args.force)
        except AcpError as exc:
            if isinstance(exc, TransportError):
                raise
            self._say(
                f"Plan “{plan.title}” was not applied ({exc.kind}): {exc}. Nothing was written.",
                Warning_,
            )
            return {"applied": False}
        self._say(
            f"Applied plan “{plan.title}” on disk: {', '.join(done.paths)}. The editor shows "
            "the files as they are on disk once it reloads them.",
            Info,
        )
        return {"applied": True, "plan": done.model_dump(mode="json")}

    async def _apply_edit(
        self, edit: types.WorkspaceEdit, label: str
    ) -> types.ApplyWorkspaceEditResult:
        """The editor's answer; an error answer counts as "not applied"."""
        try:
            return await self.session.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label=label)
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=str(exc))

    async def _cancel_plan(self, plan_id: str) -> None:
        client = self.session.link.client
        if client is not None:
            await self.session.guarded(client.plan_cancel(plan_id))


def _refusal(plan: Plan, force: bool) -> str | None:
    if plan.state is PlanState.CONSTRAINED and not force:
        reason = plan.reason or "a required validation failed in its sandbox"
        return (
            f"Plan “{plan.title}” is constrained: {reason}. Nothing was written. Fix that "
            "and propose again, or choose “Apply plan … anyway” to force it (recorded)."
        )
    if plan.state not in OPEN_PLAN:
        return f"Plan “{plan.title}” is {plan.state}: there is nothing to apply."
    return None


def _stale_message(plan: Plan, exc: Stale) -> str:
    what = (
        "Save or revert it, then apply again"
        if "unsaved" in exc.reason
        else ("Ask for a new plan (“Propose fix” again, or its author)")
    )
    return (
        f"Plan “{plan.title}” was not applied (CONFLICT): {exc.path}: {exc.reason}. "
        f"Nothing was written. {what}."
    )


class PlanProgress:
    """A proposed fix's plan as work-done progress until it settles;
    cancelling the progress cancels the plan."""

    def __init__(
        self, session: AcpLanguageServer, cancel_plan: Callable[[str], Awaitable[object]]
    ) -> None:
        self._session = session
        self._progress = session.work_done_progress
        self._cancel_plan = cancel_plan
        self._tokens: dict[str, str] = {}  # plan id -> token
        self._begun: set[str] = set()  # tokens whose begin went out
        self._settled: dict[str, str] = {}  # token -> end message, settled before its begin

    def follow(self, plan: Plan, title: str) -> None:
        token = f"acp-plan-{plan.id}"
        self._tokens[plan.id] = token
        if self._session.support.work_done_progress:
            self._session.spawn(self._start(token, title, plan))

    async def _start(self, token: str, title: str, plan: Plan) -> None:
        try:
            # Shielded, as for runs: a cancelled wait must not fail pygls's request.
            await asyncio.shield(self._progress.create_async(token))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the editor refused the token: the messages still come
            log.info("no progress for plan %s: %s", plan.id, exc)
            return
        self._progress.begin(
            token,
            types.WorkDoneProgressBegin(title=title, message=str(plan.state), cancellable=True),
        )
        self._begun.add(token)
        if plan.id not in self._tokens:  # it settled while the editor was answering
            self._finish(token, self._settled.pop(token, ""))

    def changed(self, plan: Plan) -> None:
        """A ``plan.changed`` event."""
        token = self._tokens.get(plan.id)
        if token is None:
            return
        live = token in self._begun
        if plan.state in (PlanState.QUEUED, PlanState.PROCESSING):
            if live:
                message = f"{plan.phase}: {plan.state}"
                self._progress.report(token, types.WorkDoneProgressReport(message=message))
            return
        del self._tokens[plan.id]
        if live:
            self._finish(token, str(plan.state))
        elif self._session.support.work_done_progress:
            self._settled[token] = str(plan.state)
        kind = Info if plan.state is PlanState.COMPLETE else Warning_
        self._session.say(_settled(plan), kind)

    def _finish(self, token: str, message: str) -> None:
        self._begun.discard(token)
        self._progress.end(token, types.WorkDoneProgressEnd(message=message))
        self._progress.tokens.pop(token, None)

    async def cancelled(self, token: str) -> bool:
        """The editor cancelled a progress; True if it was a plan's."""
        for plan_id, known in list(self._tokens.items()):
            if known == token:
                await self._cancel_plan(plan_id)
                return True
        return False


def _settled(plan: Plan) -> str:
    if plan.state is PlanState.COMPLETE:
        return (
            f"Plan “{plan.title}” is ready ({', '.join(plan.paths)}): preview or apply it from "
            "the code actions on those files."
        )
    reason = f": {plan.reason}" if plan.reason else ""
    if plan.state is PlanState.CONSTRAINED:
        return (
            f"Plan “{plan.title}” is constrained{reason}. Preview it, and apply it anyway "
            "from the code actions if it is still wanted (recorded as forced)."
        )
    return f"Plan “{plan.title}” is {plan.state}{reason}."
