"""What one request sees: a frozen view of the session, taken when it arrives.

A request handler gets a ``Snapshot`` and reads nothing else of the session:
however long it awaits the backend, the document's text, version and
placement, the settings and the backend's facts it answers from are the
ones it arrived with, and agree with each other. Everything here is
immutable or a copy (results and plans never change once received; the
session replaces, never edits, the mappings it hands out).

A request that must act on newer state says so: ``files`` reads the open
buffers and the disk *now* (applying an edit does, and the editor re-checks
each buffer's version against it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from lsprotocol import types

from acp_client.errors import TransportError
from lsp_server.capabilities import ClientSupport
from lsp_server.drift import AS_READ, Reading

if TYPE_CHECKING:
    from acp_client.client import AcpClient
    from acp_client.models import Plan, Resource, ValidationResult, ValidationSpec
    from acp_client.operations import ValidationSchemaResult
    from lsp_server.documents import Document
    from lsp_server.marks import ConfigMark, Held
    from lsp_server.roots import FileKey, Placement
    from lsp_server.settings import Settings
    from lsp_server.workspace_edits import EditorFile


class ShownCache:
    """The diagnostics of each open file as last converted, with the stamp
    (text version, results version) they were converted at: each code
    action request on an unchanged file reuses them."""

    def __init__(self) -> None:
        self._entries: dict[FileKey, tuple[object, Sequence[types.Diagnostic]]] = {}

    def get(
        self, key: FileKey, stamp: object, convert: Callable[[], Sequence[types.Diagnostic]]
    ) -> Sequence[types.Diagnostic]:
        entry = self._entries.get(key)
        if entry is None or entry[0] != stamp:
            entry = self._entries[key] = (stamp, convert())
        return entry[1]

    def drop(self, key: FileKey) -> None:
        self._entries.pop(key, None)


FileReader = Callable[[str, str], "EditorFile | None"]
"""(resource id, path) -> the file as the editor has it now: the open
buffer, else the disk; None when it is not a file of a known resource."""


@dataclass(frozen=True, eq=False)
class Snapshot:
    support: ClientSupport
    encoding: str
    settings: Settings
    backend: AcpClient | None  # None: not connected
    resources: Sequence[Resource]  # in play
    files: FileReader = field(repr=False)
    uri: str | None = None  # the document asked about, if any
    document: Document | None = None  # open: as the editor last sent it
    placement: Placement | None = None  # where ``uri`` belongs
    held: Sequence[Held] = ()  # the results shown on its file
    config_error: ConfigMark | None = None  # its resource's acp.toml error, shown on it
    specs: Mapping[str, ValidationSpec] = field(default_factory=dict)  # its resource's
    plans: Sequence[Plan] = ()  # its resource's
    bases: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)  # by plan
    latest: Sequence[ValidationResult] = ()  # its scope's latest result of each validation
    schema: ValidationSchemaResult | None = None  # what its resource's acp.toml may declare
    stamp: object = None  # what ``held`` and ``document`` were, for ``cache``
    cache: ShownCache | None = field(default=None, repr=False)

    @property
    def key(self) -> FileKey | None:
        return None if self.placement is None else self.placement.key

    def connected(self) -> AcpClient:
        """The backend's client, for a request that cannot do without it."""
        if self.backend is None:
            raise TransportError("not connected yet", remedy="try again in a moment")
        return self.backend

    def supports(self, operation: str) -> bool:
        """Whether the backend offers ``operation`` (unknown while not connected)."""
        return self.backend is None or self.backend.supports(operation)

    @cached_property
    def diagnostics(self) -> Sequence[types.Diagnostic]:
        """The document's diagnostics as the editor shows them (with ``data``)."""
        key = self.key
        if key is None:
            return ()
        if self.cache is None:
            return self._convert()
        return self.cache.get(key, self.stamp, self._convert)

    def _convert(self) -> Sequence[types.Diagnostic]:
        from lsp_server.mapping import as_objects, shown_diagnostics

        assert self.placement is not None
        lines = self.document.lines if self.document is not None else None
        return tuple(
            as_objects(
                shown_diagnostics(
                    self.held,
                    self.document,
                    self.placement.logical_path,
                    lines,
                    self.encoding,
                    config_error=self.config_error,
                )
            )
        )

    def shown(self, result_id: str) -> ValidationResult | None:
        """A result still shown on the document, by id (where a diagnostic's
        ``data`` leads back to)."""
        return next((result for result, _ in self.held if result.id == result_id), None)

    def reading(self, result: ValidationResult) -> Reading:
        """Where ``result``'s positions are on the document's text: as they
        are, moved through its unsaved edits, or nowhere (``lsp_server.drift``)."""
        if self.document is None or self.placement is None:
            return AS_READ
        return self.document.reading(result, self.placement.logical_path)
