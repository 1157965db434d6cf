"""The ``acp.*`` commands, as data: one table read by everything that needs them.

Each command has its name, the one object argument it takes (an attrs
class, checked strictly: a string where an int belongs is refused, not
coerced), the ACP operation it needs (its code actions are offered only
where the backend has it), the code action kind it is offered under, and
whether it edits the editor's buffers (then it is offered only where the
edit can reach them). The listing of code actions, the executor
(``workspace/executeCommand``), ``executeCommandProvider``
(``lsp_server.advertised``) and the docs test all read ``COMMANDS``; the
feature that runs a command names it in its ``runs``.

Light on purpose: attrs and cattrs are loaded with the LSP types already,
and this is read before the ``initialize`` answer (ADR 0016).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import attrs
from cattrs import Converter
from cattrs.errors import ClassValidationError
from lsprotocol import types

QUICK_FIX = types.CodeActionKind.QuickFix.value
FIX_ALL_KIND = "source.fixAll.acp"
VALIDATE_KIND = "source.acp.validate"
PLAN_KIND = "refactor.acp.plan"
KINDS = (QUICK_FIX, FIX_ALL_KIND, VALIDATE_KIND, PLAN_KIND)


@attrs.frozen
class RunArgs:
    resource_id: str
    paths: tuple[str, ...] | None = None


@attrs.frozen
class FixArgs:
    uri: str
    resource_id: str
    validation: str
    result_id: str
    finding: int
    fix: int = 0
    plan_id: str | None = None  # a plan's result, shown in its sandbox


@attrs.frozen
class FixAllArgs:
    uri: str


@attrs.frozen
class ProposeArgs:
    resource_id: str
    validation: str
    paths: tuple[str, ...] | None = None


@attrs.frozen
class PlanArgs:
    plan_id: str
    force: bool = False


Arguments = RunArgs | FixArgs | FixAllArgs | ProposeArgs | PlanArgs


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    arguments: type[Arguments]
    kind: str  # the code action kind it is offered under
    needs: str | None = None  # the ACP operation it calls, if any
    edits_buffers: bool = False  # its edit goes to the editor (resolved, or sent)


RUN_VALIDATIONS = "acp.runValidations"
APPLY_FIX = "acp.applyFix"
FIX_ALL = "acp.fixAll"
PROPOSE_FIX = "acp.proposeFix"
PREVIEW_PLAN = "acp.previewPlan"
APPLY_PLAN = "acp.applyPlan"
CANCEL_PLAN = "acp.cancelPlan"
RERUN_PLAN = "acp.rerunPlan"

COMMANDS: Mapping[str, Command] = {
    command.name: command
    for command in (
        Command(RUN_VALIDATIONS, RunArgs, VALIDATE_KIND, needs="validation.run"),
        Command(APPLY_FIX, FixArgs, QUICK_FIX, edits_buffers=True),
        Command(FIX_ALL, FixAllArgs, FIX_ALL_KIND, edits_buffers=True),
        Command(PROPOSE_FIX, ProposeArgs, QUICK_FIX, needs="plan.execute"),
        Command(PREVIEW_PLAN, PlanArgs, PLAN_KIND, needs="plan.preview"),
        Command(APPLY_PLAN, PlanArgs, PLAN_KIND, needs="plan.apply"),
        Command(CANCEL_PLAN, PlanArgs, PLAN_KIND, needs="plan.cancel"),
        Command(RERUN_PLAN, PlanArgs, PLAN_KIND, needs="validation.run"),
    )
}


class BadArguments(ValueError):
    """A command's argument does not fit its model."""


def _strict(kind: type[Any]) -> Any:
    def structure(value: object, _: type[Any]) -> object:
        # bool is an int to Python, not to a command's caller.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return structure


@functools.cache
def _strict_converter() -> Converter:
    converter = Converter(forbid_extra_keys=False)  # newer clients may send more
    for kind in (str, int, bool):
        converter.register_structure_hook(kind, _strict(kind))
    converter.register_structure_hook_func(lambda kind: kind == tuple[str, ...], _strings)
    return converter


def _strings(value: object, _: type[Any]) -> tuple[str, ...]:
    """A list of strings (a lone string would otherwise become its letters)."""
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise TypeError("expected a list of strings")
    return tuple(value)


def parse(command: Command, arguments: Sequence[object] | None) -> Arguments:
    """The command's one argument, checked; ``BadArguments`` naming what is wrong."""
    raw = (arguments or [{}])[0]
    if not isinstance(raw, dict):
        raise BadArguments(f"bad arguments for {command.name}: expected one object")
    try:
        return _strict_converter().structure(raw, command.arguments)
    except ClassValidationError as exc:
        raise BadArguments(f"bad arguments for {command.name}: {_first(exc)}") from exc
    except (TypeError, ValueError, KeyError) as exc:
        raise BadArguments(f"bad arguments for {command.name}: {exc}") from exc


def _first(group: BaseExceptionGroup[BaseException]) -> str:
    first = group.exceptions[0]
    if isinstance(first, BaseExceptionGroup):
        return _first(first)
    if isinstance(first, KeyError):
        return f"{first.args[0]} is missing"
    note = (getattr(first, "__notes__", None) or [""])[0]
    return f"{note}: {first}" if note else str(first)


def as_json(arguments: Arguments) -> dict[str, object]:
    """The argument as a command carries it (fields left at None omitted)."""
    return {
        name: list(value) if isinstance(value, tuple) else value
        for name, value in attrs.asdict(arguments, recurse=False).items()
        if value is not None
    }
