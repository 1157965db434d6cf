"""The code-action list: what a document offers at a range, from the store's
results (reached through ``Diagnostic.data``), the declared validations
and the resource's plans."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from datetime import UTC, datetime

from lsprotocol import types

from acp_client.models import (
    FindingFix,
    Location,
    Plan,
    PlanPhase,
    PlanState,
    TextEdit,
    ValidationMode,
    ValidationResult,
    ValidationSpec,
)
from lsp_server.advertised import APPLY_FIX, APPLY_PLAN, FIX_ALL_KIND, PLAN_KIND, PROPOSE_FIX
from lsp_server.features.code_actions.listing import (
    DocumentView,
    list_actions,
)
from lsp_server.features.diagnostics.mapping import as_objects, file_diagnostics
from lsp_server.marks import placed
from tests.unit.lsp.lsp_factories import finding, result

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def fix(description: str = "Remove unused import") -> FindingFix:
    location = Location(path="a.py", line=0, character=0, end_line=1, end_character=0)
    return FindingFix(description=description, edits=(TextEdit(location=location, new_text=""),))


def unused_import(*fixes: FindingFix) -> ValidationResult:
    flagged = finding("a.py", 0, 7, "`os` imported but unused", end_line=0, end_character=9)
    other = finding("a.py", 3, 0, "undefined name", end_line=3, end_character=4)
    return result("ruff", findings=[replace(flagged, fixes=fixes), other])


def plan(state: PlanState, paths: tuple[str, ...] = ("a.py",), reason: str | None = None) -> Plan:
    return Plan(
        id="P1",
        resource_id="R",
        title="ruff fix",
        phase=PlanPhase.EXECUTE,
        state=state,
        created_at=NOW,
        updated_at=NOW,
        paths=paths,
        reason=reason,
    )


def view(
    *results: ValidationResult,
    specs: tuple[ValidationSpec, ...] = (),
    plans: tuple[Plan, ...] = (),
    fresh: bool = True,
    sandbox: bool = False,
) -> DocumentView:
    latest = {(r.resource_id, r.validation): r for r in results}
    shown = as_objects(
        text
        for r in results
        if "a.py" in placed(r)
        for text in file_diagnostics(((r, placed(r)["a.py"]),), None, "utf-16")
    )
    return DocumentView(
        uri="file:///r/a.py",
        resource_id="R",
        path="a.py",
        sandbox=sandbox,
        diagnostics=shown,
        latest=lambda resource, validation, _, result_id: shown_as(
            latest.get((resource, validation)), result_id
        ),
        specs={spec.name: spec for spec in specs},
        plans=plans,
        fresh=lambda _: fresh,
    )


def at(line: int, character: int) -> types.Range:
    return types.Range(types.Position(line, character), types.Position(line, character))


def titles(actions: list[types.CodeAction]) -> list[str]:
    return [action.title for action in actions]


def test_the_findings_own_fix_is_offered_on_its_diagnostic_and_preferred() -> None:
    r = unused_import(fix())
    actions = list_actions(view(r), at(0, 8), None, resolve=True)
    (quick,) = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert quick.title == "Fix with ruff: Remove unused import"
    assert quick.is_preferred is True
    assert quick.diagnostics is not None and quick.diagnostics[0].message.startswith("`os`")
    # Lazy: the edit comes from resolve; data leads back to the finding.
    assert quick.edit is None and quick.command is None
    assert quick.data["command"] == APPLY_FIX
    assert quick.data["arguments"]["result_id"] == r.id
    assert quick.data["arguments"]["finding"] == 0


def test_with_two_fixes_neither_is_preferred() -> None:
    actions = list_actions(view(unused_import(fix("a"), fix("b"))), at(0, 8), None, resolve=True)
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.is_preferred for a in quick] == [False, False]


def test_without_resolve_support_the_fix_is_a_command() -> None:
    actions = list_actions(view(unused_import(fix())), at(0, 8), None, resolve=False)
    (quick,) = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert quick.command is not None and quick.command.command == APPLY_FIX
    assert quick.data is None


def shown_as(result: ValidationResult | None, result_id: str) -> ValidationResult | None:
    """What the store answers: the result asked for, if it is the one shown."""
    return result if result is not None and result.id == result_id else None


def test_no_fix_elsewhere_nor_when_stale_nor_for_a_replaced_result() -> None:
    r = unused_import(fix())
    assert not [a for a in list_actions(view(r), at(3, 1), None, True) if "Fix with" in a.title]
    stale = list_actions(view(r, fresh=False), at(0, 8), None, True)
    assert not [a for a in stale if "Fix with" in a.title]
    # A newer result of the same validation replaced it: the old diagnostic leads nowhere.
    shown = view(r)
    newer = r.model_copy(update={"id": "newer"})
    replaced = dataclasses.replace(shown, latest=lambda *args: shown_as(newer, args[3]))
    assert not [a for a in list_actions(replaced, at(0, 8), None, True) if "Fix with" in a.title]


def test_propose_fix_for_a_validation_that_declares_a_fix_command() -> None:
    spec = ValidationSpec(name="ruff", mode=ValidationMode.REQUIRED, has_fix=True)
    actions = list_actions(view(unused_import(), specs=(spec,)), at(3, 1), None, True)
    (propose,) = [a for a in actions if a.command and a.command.command == PROPOSE_FIX]
    assert propose.title == "Propose fix with ruff (as a plan)"
    assert propose.command is not None
    assert propose.command.arguments == [
        {"resource_id": "R", "validation": "ruff", "paths": ["a.py"]}
    ]
    undeclared = ValidationSpec(name="ruff", mode=ValidationMode.REQUIRED)
    assert not [
        a
        for a in list_actions(view(unused_import(), specs=(undeclared,)), at(3, 1), None, True)
        if "Propose" in a.title
    ]


def test_plans_touching_the_document() -> None:
    actions = list_actions(view(plans=(plan(PlanState.COMPLETE),)), at(0, 0), None, True)
    assert [t for t in titles(actions) if "plan" in t] == [
        "Preview plan “ruff fix”",
        "Apply plan “ruff fix”",
        "Re-run validations of plan “ruff fix”",
        "Cancel plan “ruff fix”",
    ]
    running = list_actions(view(plans=(plan(PlanState.PROCESSING),)), at(0, 0), None, True)
    assert [t for t in titles(running) if "plan" in t] == ["Cancel plan “ruff fix”"]
    elsewhere = plan(PlanState.COMPLETE, paths=("b.py",))
    assert not [
        t
        for t in titles(list_actions(view(plans=(elsewhere,)), at(0, 0), None, True))
        if "plan" in t
    ]
    for done in (PlanState.APPLIED, PlanState.CANCELLED, PlanState.ERRORED):
        assert not [
            t
            for t in titles(list_actions(view(plans=(plan(done),)), at(0, 0), None, True))
            if "plan" in t
        ]


def test_a_constrained_plan_is_applied_only_by_force_and_says_why() -> None:
    constrained = plan(PlanState.CONSTRAINED, reason="mypy failed in the sandbox")
    actions = list_actions(view(plans=(constrained,)), at(0, 0), None, True)
    (apply,) = [a for a in actions if a.command and a.command.command == APPLY_PLAN]
    assert apply.title == "Apply plan “ruff fix” anyway (constrained: mypy failed in the sandbox)"
    assert apply.command is not None and apply.command.arguments == [
        {"plan_id": "P1", "force": True}
    ]


def test_fix_all_and_only() -> None:
    v = view(unused_import(fix()))
    only_fix_all = list_actions(v, at(5, 0), [FIX_ALL_KIND], True)
    assert [(a.kind, a.title) for a in only_fix_all] == [
        (FIX_ALL_KIND, "Fix all: 1 problem the tools can fix")
    ]
    assert list_actions(v, at(5, 0), ["source.fixAll"], True) == only_fix_all  # a parent kind
    assert all(a.kind == PLAN_KIND for a in list_actions(v, at(0, 8), ["refactor"], True))
    assert not list_actions(view(unused_import()), at(0, 0), [FIX_ALL_KIND], True)


def test_run_validations_not_in_a_sandbox() -> None:
    assert "Run validations on a.py" in titles(list_actions(view(), at(0, 0), None, True))
    assert not [
        t for t in titles(list_actions(view(sandbox=True), at(0, 0), None, True)) if "Run" in t
    ]
