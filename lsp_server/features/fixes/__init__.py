"""The tools' own fixes: "Fix with *tool*", "Fix all", their edits and commands.

A fix is the edit a tool attached to its finding (SARIF ``fixes``, ruff's),
in code points on the text the tool read. It is offered while the document
still holds that text (``acp_client.text``: with or without a BOM) and
applied in the buffer, never on disk and never as a plan: undoable like
any edit. Clients that resolve code actions get the edit on
``codeAction/resolve``; others get a command (``acp.applyFix``,
``acp.fixAll``) that computes the same edit and sends it with
``workspace/applyEdit``. "Fix all" takes the fixes ``acp_client.fixes``
chooses, the rule ``acp-lsp check --fix`` follows too: safe ones, and
unsafe ones with the ``unsafeFixes`` setting. One fix at a time is offered
for any fix but a display-only one; an unsafe one says so in its title.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from lsprotocol import types

from acp_client.fixes import Candidate, bulk_fix, fix_all, offered_alone
from acp_client.models import FixApplicability, TextEdit, ValidationResult
from lsp_server.calls import BackendCalls
from lsp_server.code_actions import ActionRequest, action, finding_of, resolved_arguments
from lsp_server.commands import (
    APPLY_FIX,
    COMMANDS,
    FIX_ALL,
    FIX_ALL_KIND,
    QUICK_FIX,
    BadArguments,
    FixAllArgs,
    FixArgs,
    parse,
)
from lsp_server.editor import Editor
from lsp_server.features import Feature, Runner
from lsp_server.marks import indexes
from lsp_server.remedies import fitted
from lsp_server.snapshot import Snapshot
from lsp_server.workspace_edits import EditorFile, EditSupport, Stale, fix_edit

log = logging.getLogger(__name__)

Warning_ = types.MessageType.Warning
NO_LONGER_FITS = (
    "That fix no longer fits the file (it changed since the validation ran). "
    "Save to run the validations again, then pick the fix anew."
)


class Fixes(Feature):
    def __init__(self, editor: Editor, calls: BackendCalls) -> None:
        super().__init__(editor, calls)
        self.runs: Mapping[str, Runner] = {APPLY_FIX: self.apply, FIX_ALL: self.apply}
        self._logged: set[tuple[str, int]] = set()  # fixes withheld, said in the log

    # --- the listing -------------------------------------------------------

    def actions(self, request: ActionRequest) -> Iterable[types.CodeAction]:
        if request.wanted(QUICK_FIX):
            yield from self._quick_fixes(request)
        if request.wanted(FIX_ALL_KIND):
            count = len(chosen(request.snapshot)[0])
            if count:
                noun = "problem" if count == 1 else "problems"
                args = FixAllArgs(uri=_uri(request.snapshot))
                yield action(
                    f"Fix all: {count} {noun} the tools can fix",
                    FIX_ALL,
                    args,
                    lazy=request.resolve,
                )

    def _quick_fixes(self, request: ActionRequest) -> Iterable[types.CodeAction]:
        snapshot = request.snapshot
        for diagnostic in request.here:
            hit = finding_of(diagnostic, snapshot)
            if hit is None or not hit[2].fixes:
                continue
            result, index, finding = hit
            for number, fix in enumerate(finding.fixes):
                if not offered_alone(fix):
                    continue
                unsafe = " (unsafe)" if fix.applicability is FixApplicability.UNSAFE else ""
                title = f"Fix with {result.validation}{unsafe}" + (
                    f": {fix.description}" if fix.description else ""
                )
                fits = fitted(snapshot, result, fix.edits) is not None
                if not fits and not snapshot.support.code_action_disabled:
                    self._withheld(result, index, title)
                    continue
                args = FixArgs(
                    uri=_uri(snapshot),
                    resource_id=result.resource_id,
                    plan_id=result.plan_id,
                    validation=result.validation,
                    result_id=result.id,
                    finding=index,
                    fix=number,
                )
                offered = action(
                    title,
                    APPLY_FIX,
                    args,
                    lazy=request.resolve and fits,
                    diagnostics=[diagnostic],
                    preferred=len(finding.fixes) == 1 and fits and not unsafe,
                )
                if not fits:
                    offered.disabled = types.CodeActionDisabled(_changed(result.validation))
                yield offered

    def _withheld(self, result: ValidationResult, index: int, title: str) -> None:
        """Said once in the log (a client that shows no disabled action)."""
        if (result.id, index) not in self._logged:
            self._logged.add((result.id, index))
            self.editor.log(f"“{title}” not offered: {_changed(result.validation)}.")

    # --- edits -------------------------------------------------------------

    def resolve(self, snapshot: Snapshot, resolving: types.CodeAction) -> types.CodeAction:
        """``codeAction/resolve``: the edit of a fix, or (when it no longer
        fits) the command that says so when chosen."""
        found = resolved_arguments(resolving)
        if found is None or found[0] not in self.runs:
            return resolving
        name, raw = found
        try:
            args = parse(COMMANDS[name], [raw])
        except BadArguments as exc:
            log.info("not resolving %s: %s", name, exc)
            return resolving
        assert isinstance(args, FixArgs | FixAllArgs)
        edit = self.edit(snapshot, args)
        if edit is None:
            resolving.command = types.Command(resolving.title, name, arguments=[raw])
        else:
            resolving.edit = edit
        return resolving

    def edit(self, snapshot: Snapshot, args: FixArgs | FixAllArgs) -> types.WorkspaceEdit | None:
        """The edit of one fix, or of every fix "Fix all" takes; None when it
        no longer fits the text."""
        placement = snapshot.placement
        if placement is None:
            return None
        picked: list[tuple[ValidationResult, Sequence[TextEdit]]] = []
        chosen_fixes: list[tuple[ValidationResult, Sequence[TextEdit]]]
        if isinstance(args, FixArgs):
            result = snapshot.shown(args.result_id)
            if result is None:
                return None
            findings = result.findings
            if not (
                0 <= args.finding < len(findings)
                and 0 <= args.fix < len(findings[args.finding].fixes)
            ):
                return None
            chosen_fixes = [(result, findings[args.finding].fixes[args.fix].edits)]
        else:
            chosen_fixes = [
                (result, _bulk_edits(snapshot, result, index))
                for result, index in chosen(snapshot)[0]
            ]
        for result, fix in chosen_fixes:
            edits = fitted(snapshot, result, fix)
            if edits is None:
                return None
            picked.append((result, edits))
        edits = [edit for _, fix in picked for edit in fix]
        paths = {edit.location.path for edit in edits}
        targets: dict[str, EditorFile] = {}
        for path in paths:
            target = snapshot.files(placement.resource.id, path)
            if target is not None:
                targets[path] = target
        # The document's own text was checked by its reading (``fitted``);
        # another file a fix edits must still be the one the tool read.
        expected = {
            path: digest
            for result, _ in picked
            for path, digest in result.file_hashes.items()
            if path in paths and path != placement.logical_path
        }
        support = EditSupport.of(snapshot.support)
        try:
            return fix_edit(edits, targets, snapshot.encoding, support, expected)
        except Stale as exc:
            log.info("fix not offered: %s", exc)
            return None

    # --- commands (clients without resolve) -------------------------------

    async def apply(self, snapshot: Snapshot, args: object) -> object:
        """``acp.applyFix`` / ``acp.fixAll``: the same edit, sent."""
        assert isinstance(args, FixArgs | FixAllArgs)
        if not snapshot.support.apply_edit:
            self.editor.say("This editor cannot apply edits a language server sends.", Warning_)
            return {"applied": False}
        edit = self.edit(snapshot, args)
        if edit is None:
            self.editor.say(NO_LONGER_FITS, Warning_)
            return {"applied": False}
        answer = await self.editor.apply_edit(edit, "Fix")
        return {"applied": answer.applied}


def chosen(snapshot: Snapshot) -> tuple[list[Candidate], list[Candidate]]:
    """What "Fix all" takes and skips on the document (``acp_client.fixes``),
    among the findings it shows whose tool attached a fix that still fits
    (moved with the unsaved edits where they moved its lines)."""
    placement = snapshot.placement
    if placement is None:
        return [], []
    path = placement.logical_path
    candidates = [
        (result, index)
        for result, shown in snapshot.held
        for index in indexes(shown)
        if index is not None
        and _located_in(result, index, path)
        and fitted(snapshot, result, _bulk_edits(snapshot, result, index)) is not None
    ]
    return fix_all(candidates, unsafe=snapshot.settings.unsafe_fixes)


def _bulk_edits(snapshot: Snapshot, result: ValidationResult, index: int) -> Sequence[TextEdit]:
    """The edits of the fix "Fix all" takes for the finding (none: no such fix)."""
    fix = bulk_fix(result.findings[index], snapshot.settings.unsafe_fixes)
    return () if fix is None else fix.edits


def _changed(validation: str) -> str:
    return f"the line changed since {validation} read it: save to run it again"


def _located_in(result: ValidationResult, index: int, path: str) -> bool:
    location = result.findings[index].location
    return location is not None and location.path == path


def _uri(snapshot: Snapshot) -> str:
    assert snapshot.uri is not None  # an action is listed on a document
    return snapshot.uri
