"""From the session's results to the editor: push (publishDiagnostics) or pull reports.

One ``Presenter`` per session. It reads what the session holds (results,
open documents, where each file is) when it sends, converts it into
diagnostics for the negotiated position encoding (``lsp_server.mapping``),
and remembers what it sent under which URI; the editor port owns the wire.
A file is published under exactly the URI the editor opened it with, and
a file never opened under one spelling (``Roots.uri_of``); a URI it was
shown under before is emptied when the spelling changes.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii as json_string
from typing import Protocol

from lsprotocol.types import (
    DocumentDiagnosticReport,
    PositionEncodingKind,
    RelatedFullDocumentDiagnosticReport,
    RelatedUnchangedDocumentDiagnosticReport,
    WorkspaceDocumentDiagnosticReport,
    WorkspaceFullDocumentDiagnosticReport,
    WorkspaceUnchangedDocumentDiagnosticReport,
)

from lsp_server.documents import Document
from lsp_server.features.diagnostics.sent import LastSent
from lsp_server.mapping import Links, as_objects, shown_diagnostics
from lsp_server.positions import DiskText, Lines
from lsp_server.results import ResultStore
from lsp_server.roots import FileKey, Roots, inside


class Source(Protocol):
    """What the presenter reads of the session (and never changes)."""

    @property
    def roots(self) -> Roots: ...

    @property
    def results(self) -> ResultStore: ...

    def document_at(self, key: FileKey) -> Document | None:
        """The open document of a file, if the editor has it open."""
        ...


def _params_json(uri: str, version: int | None, diagnostics: str) -> str:
    version_json = "" if version is None else f', "version": {version}'
    return f'{{"uri": {json_string(uri)}{version_json}, "diagnostics": {diagnostics}}}'


class Presenter:
    def __init__(
        self, source: Source, encoding: PositionEncodingKind | str = PositionEncodingKind.Utf16
    ) -> None:
        self.source = source
        self.store = source.results
        self.roots = source.roots
        self.encoding = encoding
        self.related_information = False  # what the client takes (ClientSupport)
        self.code_description = False
        self._disk = DiskText()
        # The last publish per file: a digest of its version and diagnostics
        # (the wire dicts of 100,000 diagnostics held ~130 MB for a comparison).
        # The digest is a ``hash``: SipHash with a key random per process, 64
        # bits on 64-bit builds (a chance collision, 1 in 2**64, would skip one
        # publish); a blake2b of the encoded text cost five times as much.
        self._sent: LastSent[int] = LastSent(self.roots)
        self._reported: LastSent[None] = LastSent(self.roots)  # the last pull report per file

    # --- what to send ------------------------------------------------------

    def diagnostics(self, key: FileKey) -> list[str]:
        """The file's diagnostics (JSON text) as the editor is to show them."""
        document = self.source.document_at(key)
        lines = document.lines if document is not None else self._disk_lines(key)
        return shown_diagnostics(
            self.store.held(key),
            document,
            key[1],
            lines,
            self.encoding,
            links=self._links(key[0]),
            config_error=self.store.config_error(key),
        )

    def publish_params(self, key: FileKey) -> list[str]:
        """What to push for a file, as ``publishDiagnostics`` params in JSON:
        nothing when it would repeat the last publish; an empty publish
        first for a URI the file was shown under before (the editor keys
        diagnostics by URI string)."""
        spelt = self.roots.uri_of(key)
        before = self._sent.get(key, spelt)
        document = self.source.document_at(key)
        uri = (document.uri if document else spelt) or (before[0] if before else None)
        if uri is None:
            return []
        version = document.version if document else None
        shown = f"[{', '.join(self.diagnostics(key))}]"
        digest = hash((version, shown))
        if before == (uri, digest):
            return []
        self._sent.put(key, uri, digest, spelt)
        params = [_params_json(uri, version, shown)]
        if before is not None and before[0] != uri:
            params.insert(0, _params_json(before[0], None, "[]"))
        return params

    def has_sent(self, key: FileKey) -> bool:
        """Whether the file was published (an edit may move what it shows)."""
        return self._sent.get(key, self.roots.uri_of(key)) is not None

    def result_id(self, key: FileKey) -> str:
        """Changes whenever the marks or the text they are converted against do."""
        document = self.source.document_at(key)
        return f"{self.store.version(key)}.{document.version if document else 'disk'}"

    def document_report(self, key: FileKey, previous: str | None) -> DocumentDiagnosticReport:
        result_id = self.result_id(key)
        if previous == result_id:
            return RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return RelatedFullDocumentDiagnosticReport(
            items=as_objects(self.diagnostics(key)), result_id=result_id
        )

    def workspace_reports(
        self, previous: dict[str, str]
    ) -> list[WorkspaceDocumentDiagnosticReport]:
        """Every file the store has ever had marks for (an emptied file must
        be reported too, or the client keeps its old diagnostics; so must a
        URI the file was reported under before)."""
        reports: list[WorkspaceDocumentDiagnosticReport] = []
        for key in self.store.files():
            spelt = self.roots.uri_of(key)
            reported = self._reported.get(key, spelt)
            before = reported[0] if reported else None
            document = self.source.document_at(key)
            uri = (document.uri if document else spelt) or before
            if uri is None:
                continue
            if before is not None and before != uri:
                reports.append(
                    WorkspaceFullDocumentDiagnosticReport(uri=before, version=None, items=[])
                )
            self._reported.put(key, uri, None, spelt)
            result_id = self.result_id(key)
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
                        uri=uri,
                        version=version,
                        items=as_objects(self.diagnostics(key)),
                        result_id=result_id,
                    )
                )
        return reports

    def is_open(self, key: FileKey) -> bool:
        """Whether the editor has this file open (the user is looking at it)."""
        return self.source.document_at(key) is not None

    def uri_of(self, key: FileKey) -> str | None:
        document = self.source.document_at(key)
        return document.uri if document else self.roots.uri_of(key)

    def _lines(self, key: FileKey) -> Lines | None:
        document = self.source.document_at(key)
        return document.lines if document is not None else self._disk_lines(key)

    def _disk_lines(self, key: FileKey) -> Lines | None:
        path = self.roots.path_of(key)
        return None if path is None else self._disk.lines(path)

    def _links(self, scope: str) -> Links | None:
        if not self.related_information:
            return Links(None, True) if self.code_description else None
        places: dict[str, tuple[str, Lines] | None] = {}  # for this file's diagnostics

        def place(path: str) -> tuple[str, Lines] | None:
            if path not in places:
                places[path] = self._place((scope, path))
            return places[path]

        return Links(place, self.code_description)

    def _place(self, key: FileKey) -> tuple[str, Lines] | None:
        """A related place's URI and text; None for a path out of the root,
        the whole resource (``.``), or a file neither open nor on disk."""
        if key[1] == "." or not inside(key[1]):
            return None
        uri = self.uri_of(key)
        lines = self._lines(key)
        return None if uri is None or lines is None else (uri, lines)
