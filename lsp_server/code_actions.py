"""``textDocument/codeAction``: what every feature offers at a range, gathered.

Each feature that offers actions (fixes, plans, validations) lists its own
from the request's snapshot; this module gathers them, keeps those whose
command can work here (``lsp_server.commands``: the backend has the
operation; an edit can reach the editor) and builds each action the same
way. Listing is cheap and read-only: an action carries, in ``data`` (for
``codeAction/resolve``) or in a command (for clients without resolve), the
ids that lead back to the finding or plan; nothing changes until the user
picks one.

Diagnostics lead back to their finding through ``Diagnostic.data``
(``result_id``, ``finding``), never by matching text; a diagnostic of a
result no longer shown on the document offers nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from lsprotocol import types

from lsp_server.commands import COMMANDS, Arguments, as_json

if TYPE_CHECKING:
    from acp_client.models import Finding, ValidationResult
    from lsp_server.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """One ``textDocument/codeAction``, as the features read it."""

    snapshot: Snapshot
    range: types.Range
    here: Sequence[types.Diagnostic]  # ours at the range, and those the editor names
    wanted: Callable[[str], bool]  # a kind passes the client's ``only``
    resolve: bool  # the client resolves edits lazily (else: a command sends them)


class Offers(Protocol):
    def actions(self, request: ActionRequest) -> Iterable[types.CodeAction]: ...


def offered(
    snapshot: Snapshot, params: types.CodeActionParams, offers: Iterable[Offers]
) -> list[types.CodeAction] | None:
    """Every action at the range, from every feature, that can work here."""
    if snapshot.placement is None:
        return None
    at = params.range
    overlapping = [d for d in snapshot.diagnostics if _overlaps(d.range, at)]
    # Neovim sends the cursor line's diagnostics: ours among them count too.
    named = [d for d in params.context.diagnostics if isinstance(d.data, dict)]
    request = ActionRequest(
        snapshot,
        at,
        _unique([*overlapping, *named]),
        kind_filter(params.context.only),
        "edit" in snapshot.support.code_action_resolve,
    )
    actions = [action for offer in offers for action in offer.actions(request)]
    return [action for action in actions if can_run(snapshot, command_of(action))]


def can_run(snapshot: Snapshot, name: str | None) -> bool:
    """Whether a command can work here: the backend offers its operation;
    an edit reaches the buffer (resolved, or sent)."""
    command = COMMANDS.get(name or "")
    if command is None:
        return True
    support = snapshot.support
    if command.edits_buffers and not ("edit" in support.code_action_resolve or support.apply_edit):
        return False
    return command.needs is None or snapshot.supports(command.needs)


def action(
    title: str,
    command: str,
    args: Arguments,
    *,
    lazy: bool = False,
    diagnostics: Sequence[types.Diagnostic] | None = None,
    preferred: bool | None = None,
) -> types.CodeAction:
    """An action that runs ``command`` (of the kind the table gives it);
    ``lazy``: its edit comes from ``codeAction/resolve`` (``data``) instead."""
    arguments = as_json(args)
    return types.CodeAction(
        title=title,
        kind=COMMANDS[command].kind,
        diagnostics=list(diagnostics) if diagnostics is not None else None,
        is_preferred=preferred,
        command=None if lazy else types.Command(title, command, arguments=[arguments]),
        data={"command": command, "arguments": arguments} if lazy else None,
    )


def command_of(action: types.CodeAction) -> str | None:
    """The ``acp.*`` command an action runs, now or once resolved."""
    if action.command is not None:
        return action.command.command
    return action.data.get("command") if isinstance(action.data, dict) else None


def resolved_arguments(action: types.CodeAction) -> tuple[str, object] | None:
    """The command and raw argument a lazy action carries, if it is ours."""
    data = action.data
    if not isinstance(data, dict) or not isinstance(data.get("command"), str):
        return None
    return data["command"], data.get("arguments")


def uri_of(action: types.CodeAction) -> str | None:
    """The document a lazy action is about (its argument's ``uri``)."""
    found = resolved_arguments(action)
    raw = found[1] if found is not None else None
    uri = raw.get("uri") if isinstance(raw, dict) else None
    return uri if isinstance(uri, str) else None


def finding_of(
    diagnostic: types.Diagnostic, snapshot: Snapshot
) -> tuple[ValidationResult, int, Finding] | None:
    """The finding a diagnostic shows, if its result is still shown on the document."""
    data = diagnostic.data
    if not isinstance(data, dict):
        return None
    result_id, index = data.get("result_id"), data.get("finding")
    if not isinstance(result_id, str) or not isinstance(index, int) or isinstance(index, bool):
        return None
    result = snapshot.shown(result_id)
    if result is None or not 0 <= index < len(result.findings):
        return None
    return result, index, result.findings[index]


def kind_filter(only: Sequence[str] | None) -> Callable[[str], bool]:
    """LSP's rule: a kind is wanted when it is, or is under, one asked for."""
    if not only:
        return lambda _: True
    return lambda kind: any(kind == base or kind.startswith(f"{base}.") for base in only)


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


def _overlaps(a: types.Range, b: types.Range) -> bool:
    """Touching counts: a cursor at a diagnostic's end is on it."""
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)
