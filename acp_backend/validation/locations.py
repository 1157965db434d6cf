"""From what a tool reported to the contract's locations, for one resource root.

Paths become POSIX paths relative to the root; a path that resolves
(symlinks included) outside the root is dropped with a warning: the path
jail. Columns become code points using each file's text as read, and the
file's sha256 is kept so a client can tell when a finding went stale.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import re
from pathlib import Path

from acp_backend.validation.positions import SourceText
from acp_backend.validation.raw import RawFinding
from acp_client.models import Finding, Location
from acp_client.paths import NotAFilePath, is_within, normalize_path, real_path, relative_to

log = logging.getLogger(__name__)

_ABSOLUTE = re.compile(r"^(?:[/\\]|[A-Za-z][A-Za-z0-9+.-]*:)")  # /x, \\share, c:, file:


class FindingConverter:
    """Converts one result's findings; keeps the hashes of the files it read."""

    def __init__(self, root: str) -> None:
        self._root = normalize_path(root)
        self._real_root = real_path(root)
        self._sources: dict[str, SourceText | None] = {}
        self._paths: dict[str, str | None] = {}  # as reported -> relative, or None: outside
        self.file_hashes: dict[str, str] = {}
        self.dropped = 0

    def admits(self, raw: RawFinding) -> bool:
        """False (and counted in ``dropped``) when the finding points outside the root."""
        if raw.path is None or self._relative(raw.path) is not None:
            return True
        self.dropped += 1
        return False

    def convert(self, raw: RawFinding) -> Finding:
        """The contract's finding for one that ``admits`` let in."""
        path = self._relative(raw.path) if raw.path is not None else None
        # No file, or about the whole resource: no location.
        return Finding(
            location=None if path is None or path == "." else self._location(path, raw),
            message=raw.message,
            code=raw.code,
            severity=raw.severity,
            rule_description=raw.rule_description,
            help_uri=raw.help_uri,
        )

    def _location(self, path: str, raw: RawFinding) -> Location:
        source = self._source(path)
        line = raw.line or 0
        character = source.to_code_points(line, raw.column, raw.unit) if source else raw.column
        if raw.end_column is None:
            return Location(path=path, line=line, character=character)
        end_line = raw.end_line if raw.end_line is not None else line
        if source is None:
            end = raw.end_column + (1 if raw.end_inclusive else 0)
        else:
            end = source.to_code_points(end_line, raw.end_column, raw.unit)
            if raw.end_inclusive:  # one past the last character, counted in characters
                end = min(end + 1, len(source.line(end_line) or ""))
        # A tool's inverted range collapses onto its start.
        end_line, end = max((end_line, end), (line, character))
        return Location(
            path=path, line=line, character=character, end_line=end_line, end_character=end
        )

    def _relative(self, reported: str) -> str | None:
        """``reported`` relative to the root; None (and a warning, once per path)
        when it is not a file path or lies outside the root."""
        if reported not in self._paths:
            try:
                relative = path_in_root(reported, self._root, self._real_root)
                reason = f"it lies outside the resource root {self._root}"
            except NotAFilePath:
                relative, reason = None, "it is not a file path"
            if relative is None:
                log.warning("dropping findings for %s: %s", reported, reason)
            self._paths[reported] = relative
        return self._paths[reported]

    def _source(self, path: str) -> SourceText | None:
        if path not in self._sources:
            try:
                data = (Path(self._root) / path).read_bytes()
            except OSError:
                self._sources[path] = None  # gone or not a file: positions stay as reported
            else:
                self._sources[path] = SourceText(data)
                self.file_hashes[path] = hashlib.sha256(data).hexdigest()
        return self._sources[path]


def path_in_root(reported: str, root: str, real_root: str | None = None) -> str | None:
    """``reported`` (relative to ``root``, absolute, or a ``file:`` URI) as a
    POSIX path relative to ``root``; None when it resolves, symlinks included,
    outside it. Raises ``NotAFilePath`` for a URI of another scheme."""
    absolute = normalize_path(
        reported if _ABSOLUTE.match(reported) else posixpath.join(root, reported)
    )
    real_root = real_root or real_path(root)
    resolved = real_path(absolute)
    if not is_within(resolved, real_root):
        return None
    # Keep the name the tool used when it is inside the root; otherwise the
    # tool saw the root through a symlink and the resolved name is the one.
    if is_within(absolute, root):
        return relative_to(absolute, root)
    return relative_to(resolved, real_root)
