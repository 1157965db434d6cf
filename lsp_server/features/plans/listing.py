"""The plans a file's code actions offer: "Propose fix with ..." on a
validation's diagnostics, "Propose again" where a plan from that fix no
longer fits the file, and preview, apply, re-run and cancel for each plan
that touches it and has not ended."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from lsprotocol import types

from acp_client.appliable import constrained_because, why_not_appliable
from acp_client.models import APPLIABLE_PLAN_STATES, OPEN_PLAN_STATES, Plan, PlanState
from acp_client.text import holds
from lsp_server.code_actions import ActionRequest, action
from lsp_server.commands import (
    APPLY_PLAN,
    CANCEL_PLAN,
    PLAN_KIND,
    PREVIEW_PLAN,
    PROPOSE_FIX,
    QUICK_FIX,
    RERUN_PLAN,
    PlanArgs,
    ProposeArgs,
)
from lsp_server.remedies import proposable
from lsp_server.snapshot import Snapshot


def listed(request: ActionRequest) -> Iterable[types.CodeAction]:
    """The plan actions ``request`` asks for (by kind)."""
    if request.wanted(QUICK_FIX):
        again = _stale_by_validation(request.snapshot)
        yield from _proposals(request, skipped=again.keys())
        yield from _proposed_again(request.snapshot, again)
    if request.wanted(PLAN_KIND):
        yield from _plan_actions(request.snapshot)


def _proposals(request: ActionRequest, skipped: Collection[str]) -> Iterable[types.CodeAction]:
    """ "Propose fix with *validation*" on its diagnostics, where it declares a
    fix, but for those ``_proposed_again`` offers (the same command, named
    after the plan it replaces)."""
    snapshot = request.snapshot
    placement = snapshot.placement
    if placement is None or placement.sandbox:
        return
    seen: dict[str, list[types.Diagnostic]] = {}
    for diagnostic in request.here:
        name = diagnostic.data.get("validation") if isinstance(diagnostic.data, dict) else None
        if isinstance(name, str) and name not in skipped and proposable(snapshot, name):
            seen.setdefault(name, []).append(diagnostic)
    for name, diagnostics in seen.items():
        args = ProposeArgs(
            resource_id=placement.resource.id, validation=name, paths=(placement.logical_path,)
        )
        title = f"Propose fix with {name} (as a plan)"
        yield action(title, PROPOSE_FIX, args, diagnostics=diagnostics)


def _plan_actions(snapshot: Snapshot) -> Iterable[types.CodeAction]:
    """Each plan that touches the file and has not ended; one that no longer
    fits it can only be cancelled (``_proposed_again`` offers a new one)."""
    for plan in _touching(snapshot):
        args = PlanArgs(plan_id=plan.id)
        name = _name(plan)
        if plan.state in APPLIABLE_PLAN_STATES and not _stale(snapshot, plan):
            yield action(f"Preview {name}", PREVIEW_PLAN, args)
            if why_not_appliable(plan) is None:
                yield action(f"Apply {name}", APPLY_PLAN, args)
            else:  # constrained: refused unless forced; the user chooses, the backend records
                forced = PlanArgs(plan_id=plan.id, force=True)
                title = f"Apply {name} anyway (constrained: {constrained_because(plan)})"
                yield action(title, APPLY_PLAN, forced)
            yield action(f"Re-run validations of {name}", RERUN_PLAN, args)
        yield action(f"Cancel {name}", CANCEL_PLAN, args)


def _stale_by_validation(snapshot: Snapshot) -> dict[str, Plan]:
    """A plan made from each validation's fix that no longer fits the file
    (it changed since), where the fix can be proposed again."""
    stale: dict[str, Plan] = {}
    for plan in _touching(snapshot):
        validation = plan.source_validation
        if validation is None or validation in stale or not proposable(snapshot, validation):
            continue
        if plan.state in APPLIABLE_PLAN_STATES and _stale(snapshot, plan):
            stale[validation] = plan
    return stale


def _proposed_again(snapshot: Snapshot, stale: Mapping[str, Plan]) -> Iterable[types.CodeAction]:
    """ "Propose again" for each of those: one per validation, however many."""
    placement = snapshot.placement
    if placement is None:
        return
    for validation, plan in stale.items():
        args = ProposeArgs(
            resource_id=placement.resource.id,
            validation=validation,
            paths=(placement.logical_path,),
        )
        title = (
            f"Propose again with {validation} ({_name(plan)} no longer fits "
            f"{placement.logical_path})"
        )
        yield action(title, PROPOSE_FIX, args)


def _touching(snapshot: Snapshot) -> Iterable[Plan]:
    """The plans that change the file and have not ended (one applied in an
    editor, not saved yet, has nothing to offer: save or undo it there)."""
    placement = snapshot.placement
    if placement is None:
        return
    for plan in snapshot.plans:
        if placement.logical_path not in plan.paths or plan.state is PlanState.IN_EDITOR:
            continue
        if plan.state in OPEN_PLAN_STATES:
            yield plan


def _name(plan: Plan) -> str:
    """A plan as a menu names it: its title and what tells it from another
    with the same title (its validation, its files, the end of its id)."""
    count = len(plan.paths)
    parts = [
        *([plan.source_validation] if plan.source_validation else []),
        f"{count} file{'' if count == 1 else 's'}",
        f"#{plan.id[-4:]}",
    ]
    return f"plan “{plan.title}” ({', '.join(parts)})"


def _stale(snapshot: Snapshot, plan: Plan) -> bool:
    """Whether the file the snapshot is about no longer holds what the plan's
    change of it expects (as last saved: the file on disk)."""
    document, placement = snapshot.document, snapshot.placement
    bases = snapshot.bases.get(plan.id)
    if document is None or placement is None or bases is None:
        return False  # not known (yet): offered as fitting, the apply checks
    if placement.logical_path not in bases:
        return False
    base = bases[placement.logical_path]
    return base is None or not holds(document.last_saved, base)
