"""The backend's objects as workspace symbols: pure builders and the LSP form.

=============  ==========  =====================================  ==============================
object         SymbolKind  location                               container (name, then detail)
=============  ==========  =====================================  ==============================
resource       Package     its ``acp.toml``, first line           its root
validation     Event       its declaration line in ``acp.toml``   resource · mode · last outcome
plan (active)  Object      its first change (resolved lazily)     resource · state
=============  ==========  =====================================  ==============================

Kinds are chosen so an editor shows a distinct icon and no one mistakes a
validation for a function of the code. ``WorkspaceSymbol`` has no detail
field, so the detail rides in the container, after the resource's name.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lsprotocol import types

from acp_client.models import (
    Plan,
    PlanPreview,
    Resource,
    ResultOutcome,
    ValidationResult,
    ValidationSpec,
)
from acp_client.paths import CONFIG_FILE, path_to_uri


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    kind: types.SymbolKind
    container: str
    path: str  # absolute
    line: int | None  # None: found by workspaceSymbol/resolve (a plan's first change)
    plan_id: str | None = None
    root: str = ""  # the plan's resource root, for resolve

    def to_lsp(self) -> types.WorkspaceSymbol:
        uri = path_to_uri(self.path)
        if self.line is None:
            return types.WorkspaceSymbol(
                name=self.name,
                kind=self.kind,
                container_name=self.container,
                location=types.LocationUriOnly(uri),
                data={"plan_id": self.plan_id, "root": self.root},
            )
        return types.WorkspaceSymbol(
            name=self.name,
            kind=self.kind,
            container_name=self.container,
            location=line_location(uri, self.line),
        )


def line_location(uri: str, line: int) -> types.Location:
    start = types.Position(line, 0)
    return types.Location(uri, types.Range(start, start))


def outcome(result: ValidationResult | None) -> str:
    """A validation's last outcome in a few words."""
    if result is None:
        return "not run yet"
    if result.outcome is ResultOutcome.COMPLETED:
        if result.passed:
            return "passed"
        count = len(result.findings)
        return f"failed ({count} finding{'' if count == 1 else 's'})" if count else "failed"
    return {
        ResultOutcome.CANCELLED: "cancelled",
        ResultOutcome.TIMED_OUT: "timed out",
        ResultOutcome.ERROR: "could not run",
        ResultOutcome.UNRECORDED: "not stored by the backend",
    }[result.outcome]


def resource_symbols(
    resource: Resource,
    validations: Iterable[ValidationSpec],
    latest: Mapping[str, ValidationResult],
) -> list[Symbol]:
    """The resource and each validation it declares, with its last outcome."""
    declarations = posixpath.join(resource.root, CONFIG_FILE)
    symbols = [Symbol(resource.name, types.SymbolKind.Package, resource.root, declarations, 0)]
    for spec in validations:
        line = spec.declared_at.line if spec.declared_at is not None else 0
        detail = f"{resource.name} · {spec.mode} · {outcome(latest.get(spec.name))}"
        symbols.append(Symbol(spec.name, types.SymbolKind.Event, detail, declarations, line))
    return symbols


def plan_symbol(resource: Resource, plan: Plan, line: int | None) -> Symbol:
    """An active plan, at its first file (``line`` None: resolved later);
    one with no files yet sits on the resource's ``acp.toml``."""
    detail = f"{resource.name} · {plan.state}"
    kind, root = types.SymbolKind.Object, resource.root
    if not plan.paths:
        declarations = posixpath.join(root, CONFIG_FILE)
        return Symbol(plan.title, kind, detail, declarations, 0, plan.id, root)
    return Symbol(
        plan.title, kind, detail, posixpath.join(root, plan.paths[0]), line, plan.id, root
    )


def first_change(preview: PlanPreview) -> tuple[str, int] | None:
    """The path and line of a plan's first change (line 0 for a whole-file one)."""
    if not preview.changes:
        return None
    change = preview.changes[0]
    edits = [
        edit for edit in change.edits if edit.location.path == (change.old_path or change.path)
    ]
    return change.path, edits[0].location.line if edits else 0
