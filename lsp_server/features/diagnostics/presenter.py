"""From the store to the editor: push (publishDiagnostics) or pull reports.

One ``Presenter`` per session. It knows which documents are open (to use
their URI, version and live text), converts marks into diagnostics in the
negotiated position encoding, and tells the session what to send; the
session owns the wire.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from lsprotocol.types import (
    Diagnostic,
    DocumentDiagnosticReport,
    PositionEncodingKind,
    PublishDiagnosticsParams,
    RelatedFullDocumentDiagnosticReport,
    RelatedUnchangedDocumentDiagnosticReport,
    WorkspaceDocumentDiagnosticReport,
    WorkspaceFullDocumentDiagnosticReport,
    WorkspaceUnchangedDocumentDiagnosticReport,
)

from acp_client.models import ValidationResult
from lsp_server.features.diagnostics.mapping import config_diagnostic, to_diagnostic
from lsp_server.features.diagnostics.store import DiagnosticsStore
from lsp_server.positions import DiskText, Lines, split_lines
from lsp_server.roots import FileKey, Roots


@dataclass(slots=True)
class OpenDocument:
    uri: str
    version: int | None
    text: str
    _lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines


class Presenter:
    def __init__(
        self,
        store: DiagnosticsStore,
        roots: Roots,
        encoding: PositionEncodingKind | str,
        on_change: Callable[[FileKey], None],
    ) -> None:
        self.store = store
        self.roots = roots
        self.encoding = encoding
        self._on_change = on_change
        self._open: dict[FileKey, OpenDocument] = {}
        self._disk = DiskText()

    # --- what changed ------------------------------------------------------

    def apply(self, result: ValidationResult) -> None:
        if result.resource_id not in self.roots.resources:
            return  # a resource no folder or document of this session belongs to
        for key in self.store.apply(result):
            self._on_change(key)

    def changed(self, keys: set[FileKey]) -> None:
        for key in keys:
            self._on_change(key)

    def opened(self, key: FileKey, document: OpenDocument, clear_stale: bool) -> None:
        self._open[key] = document
        if clear_stale and self._is_stale(key, document.text):
            self.store.clear_file(key)
        if self.store.version(key):  # it has (had) diagnostics: show them as the editor sees it
            self._on_change(key)

    def edited(self, key: FileKey, document: OpenDocument, clear: bool) -> None:
        self._open[key] = document
        if clear and self.store.clear_file(key):
            self._on_change(key)

    def closed(self, key: FileKey) -> None:
        if self._open.pop(key, None) is not None:
            self._on_change(key)

    # --- what to send ------------------------------------------------------

    def diagnostics(self, key: FileKey) -> list[Diagnostic]:
        lines = self._lines(key)
        shown = [to_diagnostic(mark, lines, self.encoding) for mark in self.store.marks(key)]
        config_error = self.store.config_error(key)
        if config_error is not None:
            shown.append(config_diagnostic(config_error, lines, self.encoding))
        return shown

    def publish_params(self, key: FileKey) -> PublishDiagnosticsParams | None:
        uri = self.uri_of(key)
        if uri is None:
            return None
        document = self._open.get(key)
        return PublishDiagnosticsParams(
            uri=uri,
            diagnostics=self.diagnostics(key),
            version=document.version if document else None,
        )

    def result_id(self, key: FileKey) -> str:
        """Changes whenever the marks or the text they are converted against do."""
        document = self._open.get(key)
        return f"{self.store.version(key)}.{document.version if document else 'disk'}"

    def document_report(self, key: FileKey, previous: str | None) -> DocumentDiagnosticReport:
        result_id = self.result_id(key)
        if previous == result_id:
            return RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return RelatedFullDocumentDiagnosticReport(items=self.diagnostics(key), result_id=result_id)

    def workspace_reports(
        self, previous: dict[str, str]
    ) -> list[WorkspaceDocumentDiagnosticReport]:
        """Every file the store has ever had marks for (an emptied file must
        be reported too, or the client keeps its old diagnostics)."""
        reports: list[WorkspaceDocumentDiagnosticReport] = []
        for key in self.store.files():
            uri = self.uri_of(key)
            if uri is None:
                continue
            result_id = self.result_id(key)
            document = self._open.get(key)
            version = document.version if document else None
            if previous.get(uri) == result_id:
                reports.append(
                    WorkspaceUnchangedDocumentDiagnosticReport(
                        uri=uri, version=version, result_id=result_id
                    )
                )
            else:
                reports.append(
                    WorkspaceFullDocumentDiagnosticReport(
                        uri=uri, version=version, items=self.diagnostics(key), result_id=result_id
                    )
                )
        return reports

    def uri_of(self, key: FileKey) -> str | None:
        document = self._open.get(key)
        return document.uri if document else self.roots.uri_of(key)

    def _lines(self, key: FileKey) -> Lines | None:
        document = self._open.get(key)
        if document is not None:
            return document.lines
        path = self.roots.path_of(key)
        return None if path is None else self._disk.lines(path)

    def _is_stale(self, key: FileKey, text: str) -> bool:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        hashes = {mark.result.file_hashes.get(key[1]) for mark in self.store.marks(key)}
        hashes.discard(None)
        return any(expected != digest for expected in hashes)
