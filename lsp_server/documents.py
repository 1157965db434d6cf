"""An open document as the editor last sent it: an immutable record.

The session replaces the record on every change, so a request that took one
keeps reading the text, version and placement it arrived with, whatever
the editor sends meanwhile. Its lines and digests are worked out once, on
first use. It keeps the text as last opened or saved too (the file a tool
reads), so a result of that file can be placed on the buffer through the
unsaved edits (``lsp_server.drift``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from acp_client.text import LineIndex, digests, split_lines
from lsp_server.drift import AS_READ, Reading, reading

if TYPE_CHECKING:
    from acp_client.models import ValidationResult
    from lsp_server.roots import FileKey, Placement


@dataclass(frozen=True, eq=False)
class Document:
    uri: str  # exactly as the editor spelled it in didOpen
    version: int | None
    text: str
    placement: Placement | None = None  # None: not (yet) in a resource
    saved: str | None = None  # the text as last opened or saved (None: ``text`` itself)

    @property
    def key(self) -> FileKey | None:
        return None if self.placement is None else self.placement.key

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    def line(self, n: int) -> str:
        """Line ``n`` (empty past the last). A text that breaks with ``\\n``
        alone is not split for it: a hover on a file just opened reads one line."""
        index = self._line_index
        if index is None:
            lines = self.lines
            return lines[n] if n < len(lines) else ""
        return index.line(n)

    @cached_property
    def _line_index(self) -> LineIndex[str] | None:
        return None if "\r" in self.text else LineIndex(self.text, "\n")

    @cached_property
    def digests(self) -> frozenset[str]:
        """The digests of every file this text can be (``acp_client.text``)."""
        return digests(self.text)

    @property
    def last_saved(self) -> str:
        return self.text if self.saved is None else self.saved

    @cached_property
    def saved_lines(self) -> list[str]:
        saved = self.last_saved
        return self.lines if saved is self.text else split_lines(saved)

    def holds(self, result: ValidationResult, path: str) -> bool:
        """Whether ``result`` was computed on this text (unknown: assume so)."""
        expected = result.file_hashes.get(path)
        return expected is None or expected in self.digests

    def reading(self, result: ValidationResult, path: str) -> Reading:
        """Where ``result``'s positions in ``path`` are on this text: as they
        are, moved through the edits since the last save, or nowhere."""
        expected = result.file_hashes.get(path)
        if expected is None or expected in self.digests:
            return AS_READ
        readings = self._readings
        if expected not in readings:
            readings[expected] = reading(
                expected, self.text, self.last_saved, self.lines, self.saved_lines
            )
        return readings[expected]

    @cached_property
    def _readings(self) -> dict[str, Reading]:
        return {}
