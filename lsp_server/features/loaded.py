"""The features, built together: importing this module loads them all, and
the ACP client under them (pydantic models, httpx).

The session imports it only after answering ``initialize`` (ADR 0016).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsp_server.features import Feature
from lsp_server.features.code_actions import CodeActions
from lsp_server.features.commands import Commands
from lsp_server.features.diagnostics import Diagnostics
from lsp_server.features.hover import Hover
from lsp_server.features.symbols import Symbols

if TYPE_CHECKING:
    from lsp_server.server import AcpLanguageServer


@dataclass(frozen=True, slots=True)
class Features:
    diagnostics: Diagnostics
    code_actions: CodeActions
    commands: Commands
    hover: Hover
    symbols: Symbols

    @classmethod
    def of(cls, session: AcpLanguageServer) -> Features:
        diagnostics = Diagnostics(session)
        code_actions = CodeActions(session, diagnostics)
        commands = Commands(session, code_actions)
        return cls(diagnostics, code_actions, commands, Hover(session), Symbols(session))

    def __iter__(self) -> Iterator[Feature]:
        """In the order the session calls their hooks."""
        yield from (self.diagnostics, self.code_actions, self.commands, self.hover, self.symbols)
