"""An open document as the editor last sent it: an immutable record.

The session replaces the record on every change, so a request that took one
keeps reading the text, version and placement it arrived with, whatever
the editor sends meanwhile. Its lines and digests are worked out once, on
first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from acp_client.text import digests, split_lines

if TYPE_CHECKING:
    from acp_client.models import ValidationResult
    from lsp_server.roots import FileKey, Placement


@dataclass(frozen=True, eq=False)
class Document:
    uri: str  # exactly as the editor spelled it in didOpen
    version: int | None
    text: str
    placement: Placement | None = None  # None: not (yet) in a resource

    @property
    def key(self) -> FileKey | None:
        return None if self.placement is None else self.placement.key

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    @cached_property
    def digests(self) -> frozenset[str]:
        """The digests of every file this text can be (``acp_client.text``)."""
        return digests(self.text)

    def holds(self, result: ValidationResult, path: str) -> bool:
        """Whether ``result`` was computed on this text (unknown: assume so)."""
        expected = result.file_hashes.get(path)
        return expected is None or expected in self.digests
