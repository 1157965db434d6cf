"""What a benchmark's presenter reads of a session: the roots and results it
is given, and no document open (every file is sent as it is on disk)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lsp_server.documents import Document
from lsp_server.features.diagnostics.presenter import Presenter
from lsp_server.results import ResultStore
from lsp_server.roots import FileKey, Roots


@dataclass
class ClosedFiles:
    roots: Roots
    results: ResultStore = field(default_factory=ResultStore)

    def document_at(self, key: FileKey) -> Document | None:
        return None


def presenter(roots: Roots) -> Presenter:
    """A presenter over ``roots`` and a fresh result store, in UTF-16."""
    return Presenter(ClosedFiles(roots), "utf-16")
