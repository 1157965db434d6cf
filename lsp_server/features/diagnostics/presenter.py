"""From the store to the editor: push (publishDiagnostics) or pull reports.

One ``Presenter`` per session. It knows which documents are open (to use
their URI, version and live text), converts marks into diagnostics in the
negotiated position encoding, and tells the session what to send; the
session owns the wire.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as json_string

from lsprotocol.types import (
    DocumentDiagnosticReport,
    PositionEncodingKind,
    RelatedFullDocumentDiagnosticReport,
    RelatedUnchangedDocumentDiagnosticReport,
    WorkspaceDocumentDiagnosticReport,
    WorkspaceFullDocumentDiagnosticReport,
    WorkspaceUnchangedDocumentDiagnosticReport,
)

from acp_client.models import ValidationResult
from lsp_server.features.diagnostics.mapping import (
    Links,
    as_objects,
    config_diagnostic,
    file_diagnostics,
)
from lsp_server.features.diagnostics.sent import LastSent
from lsp_server.features.diagnostics.store import DiagnosticsStore
from lsp_server.positions import DiskText, Lines, split_lines
from lsp_server.roots import FileKey, Roots, inside

_BOM = "\ufeff"


@dataclass(slots=True)
class OpenDocument:
    uri: str
    version: int | None
    text: str
    _lines: list[str] | None = None
    _digests: frozenset[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    @property
    def digests(self) -> frozenset[str]:
        """sha256 of the text as it would be on disk, with and without a BOM
        (editors drop it from the text they send)."""
        if self._digests is None:
            self._digests = frozenset(
                hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
                for text in (self.text, _BOM + self.text)
            )
        return self._digests

    def computed_on(self, result: ValidationResult, path: str) -> bool:
        """Whether ``result`` was computed on this text (unknown: assume so)."""
        digest = result.file_hashes.get(path)
        return digest is None or digest in self.digests


def _params_json(uri: str, version: int | None, diagnostics: str) -> str:
    version_json = "" if version is None else f', "version": {version}'
    return f'{{"uri": {json_string(uri)}{version_json}, "diagnostics": {diagnostics}}}'


class Presenter:
    def __init__(
        self,
        store: DiagnosticsStore,
        roots: Roots,
        encoding: PositionEncodingKind | str,
        on_change: Callable[[Collection[FileKey]], None],
    ) -> None:
        self.store = store
        self.roots = roots
        self.encoding = encoding
        self.related_information = False  # what the client takes (ClientSupport)
        self.code_description = False
        self._on_change = on_change
        self._open: dict[FileKey, OpenDocument] = {}
        self._disk = DiskText()
        # The last publish per file: a digest of its version and diagnostics
        # (the wire dicts of 100,000 diagnostics held ~130 MB for a comparison).
        # The digest is a ``hash``: SipHash with a key random per process, 64
        # bits on 64-bit builds (a chance collision, 1 in 2**64, would skip one
        # publish); a blake2b of the encoded text cost five times as much.
        self._sent: LastSent[int] = LastSent(roots)
        self._reported: LastSent[None] = LastSent(roots)  # the last pull report per file

    # --- what changed ------------------------------------------------------

    def apply(self, result: ValidationResult, scope: str | None = None) -> None:
        if result.resource_id not in self.roots.resources:
            return  # a resource no folder or document of this session belongs to
        self.changed(self.store.apply(result, scope))

    def apply_partial(
        self, result: ValidationResult, covered: Collection[str], base_id: str
    ) -> bool:
        """A partial result of the resource (``DiagnosticsStore.apply_partial``);
        False when the store cannot merge it: list the results to catch up."""
        if result.resource_id not in self.roots.resources:
            return True
        changed = self.store.apply_partial(result, covered, base_id)
        if changed is not None:
            self.changed(changed)
        return changed is not None

    def changed(self, keys: Collection[FileKey]) -> None:
        """Tell ``on_change`` of files whose diagnostics changed, all at once:
        ten results over 10,000 files are 100,000 of them."""
        if keys:
            self._on_change(keys)

    def opened(self, key: FileKey, document: OpenDocument, clear_stale: bool) -> None:
        self._open[key] = document
        if clear_stale and self._is_stale(key, document):
            self.store.clear_file(key)
        if self.store.version(key):  # it has (had) diagnostics: show them as the editor sees it
            self._on_change((key,))

    def edited(self, key: FileKey, document: OpenDocument, clear: bool) -> None:
        self._open[key] = document
        if clear and self.store.clear_file(key):
            self._on_change((key,))

    def closed(self, key: FileKey) -> None:
        if self._open.pop(key, None) is not None:
            self._on_change((key,))

    # --- what to send ------------------------------------------------------

    def diagnostics(self, key: FileKey) -> list[str]:
        """The file's diagnostics (JSON text) against the text the editor
        has. A mark computed on other text than an open buffer's (another
        validation re-ran after an edit, this one not yet) is held back until
        its own validation reports again: placed on the new text it would be
        wrong."""
        lines = self._lines(key)
        document = self._open.get(key)
        links = self._links(key[0])
        held = self.store.held(key)
        if document is not None:
            held = [
                (result, shown) for result, shown in held if document.computed_on(result, key[1])
            ]
        shown = file_diagnostics(held, lines, self.encoding, links)
        config_error = self.store.config_error(key)
        if config_error is not None:
            shown.append(config_diagnostic(config_error, lines, self.encoding))
        return shown

    def publish_params(self, key: FileKey) -> list[str]:
        """What to push for a file, as ``publishDiagnostics`` params in JSON:
        nothing when it would repeat the last publish; an empty publish
        first for a URI the file was shown under before (the editor keys
        diagnostics by URI string)."""
        spelt = self.roots.uri_of(key)
        before = self._sent.get(key, spelt)
        document = self._open.get(key)
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

    def result_id(self, key: FileKey) -> str:
        """Changes whenever the marks or the text they are converted against do."""
        document = self._open.get(key)
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
            document = self._open.get(key)
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
        return key in self._open

    def uri_of(self, key: FileKey) -> str | None:
        document = self._open.get(key)
        return document.uri if document else self.roots.uri_of(key)

    def _lines(self, key: FileKey) -> Lines | None:
        document = self._open.get(key)
        if document is not None:
            return document.lines
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

    def _is_stale(self, key: FileKey, document: OpenDocument) -> bool:
        return any(not document.computed_on(result, key[1]) for result, _ in self.store.held(key))
