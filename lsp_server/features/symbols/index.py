"""The backend's objects as workspace symbols: pure builders and the LSP form.

=============  ==========  =====================================  ==============================
object         SymbolKind  location                               container (name, then detail)
=============  ==========  =====================================  ==============================
resource       Package     its ``acp.toml``, first line           its root
validation     Event       its declaration line in ``acp.toml``   resource · mode · last outcome
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

from acp_client.models import Resource, ResultOutcome, ValidationResult, ValidationSpec
from acp_client.paths import path_to_uri

DECLARATION_FILE = "acp.toml"


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    kind: types.SymbolKind
    container: str
    path: str  # absolute
    line: int

    def to_lsp(self) -> types.WorkspaceSymbol:
        start = types.Position(self.line, 0)
        return types.WorkspaceSymbol(
            name=self.name,
            kind=self.kind,
            container_name=self.container,
            location=types.Location(path_to_uri(self.path), types.Range(start, start)),
        )


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
    }[result.outcome]


def resource_symbols(
    resource: Resource,
    validations: Iterable[ValidationSpec],
    latest: Mapping[str, ValidationResult],
) -> list[Symbol]:
    """The resource and each validation it declares, with its last outcome."""
    declarations = posixpath.join(resource.root, DECLARATION_FILE)
    symbols = [Symbol(resource.name, types.SymbolKind.Package, resource.root, declarations, 0)]
    for spec in validations:
        line = spec.declared_at.line if spec.declared_at is not None else 0
        detail = f"{resource.name} · {spec.mode} · {outcome(latest.get(spec.name))}"
        symbols.append(Symbol(spec.name, types.SymbolKind.Event, detail, declarations, line))
    return symbols
