"""Which code actions a document offers at a range: pure, read-only.

The list is cheap: it names what can be done and carries, in ``data`` (for
``codeAction/resolve``) or in a command (for clients without resolve),
the ids that lead back to the finding or plan. No edit is computed here;
an edit is computed when the user picks the action (``resolve``), and
anything that changes state runs as an ``acp.*`` command.

Diagnostics lead back to their finding through ``Diagnostic.data``
(``resource_id``, ``validation``, ``result_id``, ``finding``), never by
matching text; a diagnostic of a result that has since been replaced
offers no fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pydantic import BaseModel, ConfigDict

from acp_client.models import Finding, Plan, PlanState, ValidationResult, ValidationSpec
from lsp_server.advertised import (
    APPLY_FIX,
    APPLY_PLAN,
    CANCEL_PLAN,
    FIX_ALL,
    FIX_ALL_KIND,
    PLAN_KIND,
    PREVIEW_PLAN,
    PROPOSE_FIX,
    RERUN_PLAN,
    RUN_VALIDATIONS,
    VALIDATE_KIND,
)

NEEDS = {
    RUN_VALIDATIONS: "validation.run",
    PROPOSE_FIX: "plan.execute",
    PREVIEW_PLAN: "plan.preview",
    APPLY_PLAN: "plan.apply",
    CANCEL_PLAN: "plan.cancel",
    RERUN_PLAN: "validation.run",
}
"""The ACP operation each command needs (the quick fixes need none)."""

OPEN_PLAN = frozenset({PlanState.COMPLETE, PlanState.CONSTRAINED})
"""Plans that can still be previewed and applied."""
LIVE_PLAN = OPEN_PLAN | {PlanState.QUEUED, PlanState.PROCESSING}
"""Plans that can still be cancelled."""


class Arguments(BaseModel):
    """A command's one argument (an object, camelCase-free: it is ours)."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class RunArgs(Arguments):
    resource_id: str
    paths: tuple[str, ...] | None = None


class FixArgs(Arguments):
    uri: str
    resource_id: str
    plan_id: str | None = None  # a plan's result, shown in its sandbox
    validation: str
    result_id: str
    finding: int
    fix: int = 0


class FixAllArgs(Arguments):
    uri: str


class ProposeArgs(Arguments):
    resource_id: str
    validation: str
    paths: tuple[str, ...] | None = None


class PlanArgs(Arguments):
    plan_id: str
    force: bool = False


Latest = Callable[[str, str, str | None, str], ValidationResult | None]
"""(resource id, validation, plan id, result id) -> that result, if still shown."""


@dataclass(frozen=True, slots=True)
class DocumentView:
    """What the listing reads about one document, taken when asked."""

    uri: str
    resource_id: str
    path: str  # relative to the resource root
    sandbox: bool
    diagnostics: Sequence[types.Diagnostic]  # what the editor shows for it, with data
    latest: Latest
    specs: Mapping[str, ValidationSpec]  # the resource's declared validations, by name
    plans: Sequence[Plan]  # the resource's plans
    fresh: Callable[[ValidationResult], bool]  # its findings still fit the text


def finding_of(
    diagnostic: types.Diagnostic, latest: Latest
) -> tuple[ValidationResult, int, Finding] | None:
    """The finding a diagnostic shows, if its result is still the one shown."""
    data = diagnostic.data
    if not isinstance(data, dict):
        return None
    resource_id, validation, index = (
        data.get("resource_id"),
        data.get("validation"),
        data.get("finding"),
    )
    if (
        not isinstance(resource_id, str)
        or not isinstance(validation, str)
        or not isinstance(index, int)
    ):
        return None
    plan_id = data.get("plan_id")
    result_id = data.get("result_id")
    if not isinstance(result_id, str):
        return None
    result = latest(
        resource_id, validation, plan_id if isinstance(plan_id, str) else None, result_id
    )
    if result is None or not 0 <= index < len(result.findings):
        return None
    return result, index, result.findings[index]


def list_actions(
    view: DocumentView,
    at: types.Range,
    only: Sequence[str] | None,
    resolve: bool,
    context: Sequence[types.Diagnostic] = (),
) -> list[types.CodeAction]:
    """Every action at ``at``, filtered by the client's ``only`` kinds.

    ``context``: the diagnostics the editor says are here (Neovim sends the
    cursor line's); ours among them count even outside ``at``. ``resolve``:
    the client resolves edits lazily; otherwise an action that edits is a
    command the server carries out (``workspace/applyEdit``).
    """
    wanted = _kind_filter(only)
    actions: list[types.CodeAction] = []
    overlapping = [d for d in view.diagnostics if _overlaps(d.range, at)]
    here = _unique([*overlapping, *(d for d in context if isinstance(d.data, dict))])
    if wanted(types.CodeActionKind.QuickFix):
        actions.extend(_fixes(view, here, resolve))
        actions.extend(_proposals(view, here))
    if wanted(FIX_ALL_KIND):
        actions.extend(_fix_all(view, resolve))
    if wanted(PLAN_KIND):
        actions.extend(_plan_actions(view))
    if wanted(VALIDATE_KIND) and not view.sandbox:
        actions.extend(_runs(view))
    return actions


def fixable(view: DocumentView) -> list[tuple[ValidationResult, int, Finding]]:
    """The document's findings whose tool supplied a fix that still fits."""
    found = []
    for diagnostic in view.diagnostics:
        hit = finding_of(diagnostic, view.latest)
        if hit is not None and hit[2].fixes and view.fresh(hit[0]):
            found.append(hit)
    return found


def _fixes(
    view: DocumentView, here: Iterable[types.Diagnostic], resolve: bool
) -> Iterable[types.CodeAction]:
    for diagnostic in here:
        hit = finding_of(diagnostic, view.latest)
        if hit is None or not hit[2].fixes or not view.fresh(hit[0]):
            continue
        result, index, finding = hit
        for number, fix in enumerate(finding.fixes):
            title = f"Fix with {result.validation}" + (
                f": {fix.description}" if fix.description else ""
            )
            args = FixArgs.model_construct(  # from a stored result: already valid, and hot
                uri=view.uri,
                resource_id=result.resource_id,
                plan_id=result.plan_id,
                validation=result.validation,
                result_id=result.id,
                finding=index,
                fix=number,
            )
            yield _action(
                title,
                types.CodeActionKind.QuickFix,
                APPLY_FIX,
                args,
                lazy=resolve,
                diagnostics=[diagnostic],
                preferred=len(finding.fixes) == 1,
            )


def _proposals(view: DocumentView, here: Iterable[types.Diagnostic]) -> Iterable[types.CodeAction]:
    if view.sandbox:
        return
    seen: dict[str, list[types.Diagnostic]] = {}
    for diagnostic in here:
        name = diagnostic.data.get("validation") if isinstance(diagnostic.data, dict) else None
        spec = view.specs.get(name) if isinstance(name, str) else None
        if spec is not None and spec.has_fix:
            seen.setdefault(spec.name, []).append(diagnostic)
    for name, diagnostics in seen.items():
        args = ProposeArgs(resource_id=view.resource_id, validation=name, paths=(view.path,))
        yield _action(
            f"Propose fix with {name} (as a plan)",
            types.CodeActionKind.QuickFix,
            PROPOSE_FIX,
            args,
            diagnostics=diagnostics,
        )


def _fix_all(view: DocumentView, resolve: bool) -> Iterable[types.CodeAction]:
    count = len(fixable(view))
    if count:
        noun = "problem" if count == 1 else "problems"
        yield _action(
            f"Fix all: {count} {noun} the tools can fix",
            FIX_ALL_KIND,
            FIX_ALL,
            FixAllArgs(uri=view.uri),
            lazy=resolve,
        )


def _plan_actions(view: DocumentView) -> Iterable[types.CodeAction]:
    for plan in view.plans:
        if view.path not in plan.paths or plan.state not in LIVE_PLAN:
            continue
        args = PlanArgs(plan_id=plan.id)
        name = f"plan “{plan.title}”"
        if plan.state in OPEN_PLAN:
            yield _action(f"Preview {name}", PLAN_KIND, PREVIEW_PLAN, args)
            if plan.state is PlanState.CONSTRAINED:
                # Refused unless forced: the user chooses the force, the backend records it.
                reason = plan.reason or "a required validation failed in its sandbox"
                forced = PlanArgs(plan_id=plan.id, force=True)
                yield _action(
                    f"Apply {name} anyway (constrained: {reason})", PLAN_KIND, APPLY_PLAN, forced
                )
            else:
                yield _action(f"Apply {name}", PLAN_KIND, APPLY_PLAN, args)
            yield _action(f"Re-run validations of {name}", PLAN_KIND, RERUN_PLAN, args)
        yield _action(f"Cancel {name}", PLAN_KIND, CANCEL_PLAN, args)


def _runs(view: DocumentView) -> Iterable[types.CodeAction]:
    name = view.path.rsplit("/", 1)[-1]
    yield _action(
        f"Run validations on {name}",
        VALIDATE_KIND,
        RUN_VALIDATIONS,
        RunArgs(resource_id=view.resource_id, paths=(view.path,)),
    )
    yield _action(
        "Run validations on the whole resource",
        VALIDATE_KIND,
        RUN_VALIDATIONS,
        RunArgs(resource_id=view.resource_id),
    )


def _action(
    title: str,
    kind: str,
    command: str,
    args: Arguments,
    *,
    lazy: bool = False,
    diagnostics: list[types.Diagnostic] | None = None,
    preferred: bool | None = None,
) -> types.CodeAction:
    """``lazy``: the edit comes from ``codeAction/resolve`` (``data``);
    otherwise the action runs ``command``."""
    payload: dict[str, Any] = {
        "command": command,
        "arguments": args.model_dump(mode="json", exclude_none=True),
    }
    return types.CodeAction(
        title=title,
        kind=kind,
        diagnostics=diagnostics,
        is_preferred=preferred,
        command=None if lazy else types.Command(title, command, arguments=[payload["arguments"]]),
        data=payload if lazy else None,
    )


def command_of(action: types.CodeAction) -> str | None:
    """The ``acp.*`` command an action runs, now or once resolved."""
    if action.command is not None:
        return action.command.command
    return action.data.get("command") if isinstance(action.data, dict) else None


def _unique(diagnostics: Iterable[types.Diagnostic]) -> list[types.Diagnostic]:
    """One per finding (the editor's copy and ours are the same one)."""
    seen: set[tuple[object, object]] = set()
    kept = []
    for diagnostic in diagnostics:
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        identity = (data.get("result_id"), data.get("finding"))
        if identity[0] is not None and identity in seen:
            continue
        seen.add(identity)
        kept.append(diagnostic)
    return kept


def _kind_filter(only: Sequence[str] | None) -> Callable[[str], bool]:
    """LSP's rule: a kind is wanted when it is, or is under, one asked for."""
    if not only:
        return lambda _: True
    return lambda kind: any(kind == base or kind.startswith(f"{base}.") for base in only)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    """Touching counts: a cursor at a diagnostic's end is on it."""
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)
