"""docs/code-actions.md documents exactly the commands the server handles
(and so advertises): a new command without its row, or a stale row, fails."""

from __future__ import annotations

import re
from pathlib import Path

from lsp_server.commands import COMMANDS, KINDS

DOC = Path(__file__).resolve().parents[3] / "docs" / "code-actions.md"


def test_every_command_and_kind_is_documented_and_nothing_else() -> None:
    text = DOC.read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(acp\.[A-Za-z]+)` \|", text, re.MULTILINE))
    assert documented == set(COMMANDS)
    for kind in KINDS:
        name = getattr(kind, "value", kind)
        assert f"`{name}`" in text, name
