"""The features, built together: importing this module loads them all, and
the ACP client under them (pydantic models, httpx).

The server imports it only after answering ``initialize`` (ADR 0016).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from lsp_server.calls import BackendCalls
from lsp_server.editor import Editor
from lsp_server.features import Feature, Runner
from lsp_server.features.declarations import Declarations
from lsp_server.features.diagnostics import Diagnostics
from lsp_server.features.diagnostics.presenter import Source
from lsp_server.features.fixes import Fixes
from lsp_server.features.hover import Hover
from lsp_server.features.plans import Plans
from lsp_server.features.suppress import Suppress
from lsp_server.features.symbols import Symbols
from lsp_server.features.validations import Validations


@dataclass(frozen=True, slots=True)
class Features:
    diagnostics: Diagnostics
    fixes: Fixes
    plans: Plans
    validations: Validations
    suppress: Suppress
    declarations: Declarations
    hover: Hover
    symbols: Symbols

    @classmethod
    def of(cls, editor: Editor, calls: BackendCalls, source: Source) -> Features:
        return cls(
            Diagnostics(editor, calls, source),
            Fixes(editor, calls),
            Plans(editor, calls),
            Validations(editor, calls),
            Suppress(editor, calls),
            Declarations(editor, calls),
            Hover(editor, calls),
            Symbols(editor, calls),
        )

    def __iter__(self) -> Iterator[Feature]:
        """In the order the session calls their hooks (and lists their actions)."""
        yield from (
            self.diagnostics,
            self.fixes,
            self.plans,
            self.validations,
            self.suppress,
            self.declarations,
            self.hover,
            self.symbols,
        )

    def runners(self) -> Mapping[str, Runner]:
        """Every command, by name, with the feature method that runs it."""
        return {name: run for feature in self for name, run in feature.runs.items()}
