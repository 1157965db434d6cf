"""``textDocument/completion``: what every feature offers at the cursor, gathered.

Completion is asked at every keystroke, so it is answered from the
request's snapshot alone (the declarations, the schema of ``acp.toml``, the
results held): no backend call. Each feature that completes (declarations
in ``acp.toml``, codes in a suppression comment) lists its own items; this
module reads the cursor's line once and gathers them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from lsprotocol import types

from lsp_server.positions import code_points, column

if TYPE_CHECKING:
    from lsp_server.snapshot import Snapshot

TRIGGERS = ("=", '"', ":", "[", ",", " ")
"""Where a list is wanted without a word typed: after ``key =`` or an opening
quote in ``acp.toml``; after a comment's prefix (``# noqa: ``, ``ignore[``,
``disable=``) or a separator between codes."""


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    snapshot: Snapshot
    position: types.Position
    text: str  # the cursor's line
    character: int  # the cursor, in code points

    def documentation(self, markdown: str) -> types.MarkupContent | str:
        """``markdown`` as the client takes it: Markdown, or its plain words
        (a string: what every client reads)."""
        if self.snapshot.support.completion_markdown:
            return types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown)
        plain = markdown.replace("```toml\n", "").replace("```", "")
        return plain.replace("**", "").replace("`", "")

    def label_details(self, description: str) -> types.CompletionItemLabelDetails | None:
        """A note beside the label, for clients that show one."""
        if not self.snapshot.support.completion_label_details:
            return None
        return types.CompletionItemLabelDetails(description=description)

    def replacing(self, start: int) -> types.Range:
        """The range from ``start`` (code points) to the cursor, in the client's unit."""
        encoding = self.snapshot.encoding
        line = self.position.line
        return types.Range(types.Position(line, column(self.text, start, encoding)), self.position)


class Completes(Protocol):
    def completions(self, request: CompletionRequest) -> Iterable[types.CompletionItem]: ...


def completed(
    snapshot: Snapshot, position: types.Position, features: Iterable[Completes]
) -> types.CompletionList | None:
    """Every feature's items at ``position`` of the snapshot's document."""
    document = snapshot.document
    if document is None or snapshot.placement is None:
        return None  # not open, or in no registered resource: nothing, and no error
    lines = document.lines
    text = lines[position.line] if position.line < len(lines) else ""
    request = CompletionRequest(
        snapshot, position, text, code_points(text, position.character, snapshot.encoding)
    )
    items = [item for feature in features for item in feature.completions(request)]
    return types.CompletionList(is_incomplete=False, items=items) if items else None
