"""From what a tool reported to the contract's locations, for one resource root.

Paths become POSIX paths relative to the root; a path that resolves
(symlinks included) outside the root is dropped with a warning: the path
jail. Columns become code points using each file's text as read, and the
file's sha256 is kept so a client can tell when a finding went stale.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import posixpath
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from acp_backend.validation.config import ColumnUnit
from acp_backend.validation.file_facts import FileFacts
from acp_backend.validation.positions import SourceText
from acp_backend.validation.raw import RawFinding, RawRegion, clip
from acp_client.models import FINDINGS, Finding, FixApplicability
from acp_client.paths import NotAFilePath, is_within, normalize_path, real_path, relative_to

log = logging.getLogger(__name__)

FindingWire = dict[str, Any]
"""A finding (or one of its parts) as the contract's JSON-ready data."""

Span = tuple[int, int, int | None, int | None]
"""(line, column, end line, end column) as a tool reported them, 0-based."""


def findings_of(wires: Sequence[FindingWire]) -> tuple[Finding, ...]:
    """The contract's findings for converted ones, validated in one pass."""
    return FINDINGS.validate_python(wires) if wires else ()


_ABSOLUTE = re.compile(r"^(?:[/\\]|[A-Za-z][A-Za-z0-9+.-]*:)")  # /x, \\share, c:, file:


class FindingConverter:
    """Converts one result's findings; keeps the hashes of the files it read.

    Relative paths in the output are relative to ``base`` (the tool's working
    directory, the root by default); ``path_map`` rewrites the prefixes a tool
    reported from elsewhere (a container's ``file:///src/``) to paths
    relative to the root. A finding about a file that is not there is
    dropped: its columns could not be converted, and a wrong working
    directory would otherwise go unnoticed. ``facts``: files earlier parses
    read (``file_facts``), and where the files read now are noted.
    ``bom_counted``: the tool counts a file's UTF-8 BOM in its first line's
    columns (the contract never does).
    """

    def __init__(
        self,
        root: str,
        base: str | None = None,
        path_map: Mapping[str, str] | None = None,
        facts: FileFacts | None = None,
        bom_counted: bool = False,
    ) -> None:
        self._root = normalize_path(root)
        self._bom_counted = bom_counted
        self._real_root = real_path(root)
        self._base = normalize_path(base) if base else self._root
        # The base relative to the root ("" for the root), when it is under
        # it and not the file system's root (where "base/x" is no path).
        self._base_in_root = (
            None
            if self._base == "/" or not is_within(self._base, self._root)
            else relative_to(self._base, self._root).removeprefix(".")
        )
        self._path_map = sorted((path_map or {}).items(), key=lambda item: -len(item[0]))
        self._sources: dict[str, SourceText | None] = {}
        self._paths: dict[str, str | None] = {}  # as reported -> relative, or None: dropped
        self._real_dirs: dict[str, str] = {}  # directory -> its real path
        self._dirs_inside: dict[str, bool] = {}  # directory -> its real path is in the root
        self._root_slash = self._root.rstrip("/") + "/"
        self._linked_out: set[str] = set()  # plain paths that are links out of the root
        self._facts = facts
        self.known = 0  # files whose text and digest came from ``facts``
        self.file_hashes: dict[str, str] = {}
        self.dropped = 0  # outside the root
        self.missing = 0  # inside, but no such file

    def admits(self, raw: RawFinding) -> bool:
        """False (and counted) when the finding points outside the root or at
        a file that does not exist."""
        if raw.path is None:
            return True
        relative = self._relative(raw.path)
        if relative is None:
            self.dropped += 1
            return False
        if relative != "." and self._source(relative) is None:
            if relative in self._linked_out:
                self.dropped += 1
            else:
                self.missing += 1
            return False
        return True

    def convert(self, raw: RawFinding) -> FindingWire:
        """The contract's finding, as JSON-ready data, for one that ``admits``
        let in: a parse makes these by the ten thousand, and pydantic reads
        them in bulk (``findings_of``, or JSON from the parsing child) faster
        than it builds them one by one."""
        finding: FindingWire = {"message": clip(raw.message)}
        path = None if raw.path is None else self._relative(raw.path)
        if path is not None and path != ".":  # None: no file; ".": the whole resource
            if raw.region is None:
                span = (raw.line or 0, raw.column, raw.end_line, raw.end_column)
                finding["location"] = self._span(path, span, raw.unit, raw.end_inclusive)
            else:
                finding["location"] = self._location(path, raw.region, raw.unit, raw.end_inclusive)
        if raw.code is not None:
            finding["code"] = raw.code
        if raw.severity is not None:
            finding["severity"] = raw.severity
        if raw.rule_description is not None:
            finding["rule_description"] = raw.rule_description
        if raw.help_uri is not None:
            finding["help_uri"] = raw.help_uri
        if raw.related:
            finding["related"] = list(self._related(raw))
        if raw.fixes:
            finding["fixes"] = list(self._fixes(raw))
        return finding

    def _related(self, raw: RawFinding) -> Iterator[FindingWire]:
        for related in raw.related:
            location = self._located(related.region, raw.unit)
            if location is not None:
                yield {"location": location, "message": related.message}

    def _fixes(self, raw: RawFinding) -> Iterator[FindingWire]:
        for fix in raw.fixes:
            edits = []
            for edit in fix.edits:
                location = self._located(edit.region, raw.unit)
                if location is None:
                    break  # a fix that touches a file out of reach is not offered
                edits.append({"location": location, "new_text": edit.new_text})
            else:
                wire: FindingWire = {"description": fix.description, "edits": edits}
                if fix.applicability is not FixApplicability.SAFE:
                    wire["applicability"] = str(fix.applicability)
                yield wire

    def _located(self, region: RawRegion, unit: ColumnUnit) -> FindingWire | None:
        """A secondary place (related location, fix edit), or None when it is
        outside the root or in a file that is not there."""
        path = self._relative(region.path)
        if path is None or path == "." or self._source(path) is None:
            return None
        return self._location(path, region, unit, end_inclusive=False)

    def _location(
        self, path: str, region: RawRegion, unit: ColumnUnit, end_inclusive: bool
    ) -> FindingWire:
        if region.offset is None:
            span = (region.line, region.column, region.end_line, region.end_column)
            return self._span(path, span, unit, end_inclusive)
        source = self._source(path)
        if source is None:  # gone since it was admitted: positions as reported
            return {"path": path, "line": region.line, "character": region.column}
        offset_unit = ColumnUnit.BYTES if region.offset_in_bytes else unit
        counted = self._bom_counted
        line, character = source.at_offset(region.offset, offset_unit, counted)
        end_line, end = source.at_offset(region.offset + region.length, offset_unit, counted)
        return {
            "path": path, "line": line, "character": character,
            "end_line": end_line, "end_character": end,
        }  # fmt: skip

    def _span(self, path: str, span: Span, unit: ColumnUnit, end_inclusive: bool) -> FindingWire:
        """A line-and-column range, its columns converted to code points."""
        line, column, end_line, end_column = span
        source = self._source(path)
        if source is None:  # gone since it was admitted: positions as reported
            return {"path": path, "line": line, "character": column}
        character = source.to_code_points(line, column, unit, self._bom_counted)
        if end_line is None and end_column is None:
            return {"path": path, "line": line, "character": character}
        if end_line is None:
            end_line = line
        if end_column is None:  # to the end of that line (SARIF)
            end = source.line_length(end_line)
        else:
            end = source.to_code_points(end_line, end_column, unit, self._bom_counted)
            if end_inclusive:  # one past the last character, counted in characters
                end = min(end + 1, source.line_length(end_line))
        # A tool's inverted range collapses onto its start.
        end_line, end = max((end_line, end), (line, character))
        return {
            "path": path, "line": line, "character": character,
            "end_line": end_line, "end_character": end,
        }  # fmt: skip

    def _relative(self, reported: str) -> str | None:
        """``reported`` relative to the root; None (and a warning, once per path)
        when it is not a file path or lies outside the root."""
        known = self._paths.get(reported, "")  # "" is no relative path: not seen yet
        if known != "":
            return known
        mapped = self._mapped(reported)
        try:
            if mapped is reported and self._base_in_root is not None and _plain(reported):
                relative = self._plain_in_root(reported)
            else:
                relative = path_in_root(mapped, self._base, self._real_root, self._root, self._real)
            reason = f"it lies outside the resource root {self._root}"
        except (NotAFilePath, ValueError):
            relative, reason = None, "it is not a file path"
        if relative is None:
            log.warning("dropping findings for %s: %s", reported, reason)
        self._paths[reported] = relative
        return relative

    def _plain_in_root(self, reported: str) -> str | None:
        """``path_in_root`` for a relative path with nothing to normalise
        (``_plain``) under a base inside the root: the common case, without
        its string work. Only the directory is resolved here where the system
        can refuse to open a link (``_NO_FOLLOW``): ``_source`` then opens the
        file without following one, and checks a link only when it meets one.
        That saves an ``lstat`` a file: ten validators over 10,000 files made
        100,000 of them."""
        absolute = f"{self._base}/{reported}"
        if _NO_FOLLOW:
            parent, _, name = absolute.rpartition("/")
            inside = self._dirs_inside.get(parent)
            if inside is None:  # once per directory: its files are in the root when it is
                inside = self._dirs_inside[parent] = is_within(
                    self._real_dir(parent), self._real_root
                )
            if not inside:  # a directory outside may still lead back to the root itself
                inside = is_within(f"{self._real_dir(parent)}/{name}", self._real_root)
        else:
            inside = is_within(self._real(absolute), self._real_root)
        if not inside:
            return None
        return f"{self._base_in_root}/{reported}" if self._base_in_root else reported

    def _real(self, absolute: str) -> str:
        """``real_path`` with each directory resolved once: a thousand files
        in one package are a thousand lstat calls, not a thousand walks up
        the tree."""
        parent, name = posixpath.split(absolute)
        try:
            link = stat.S_ISLNK(os.lstat(absolute).st_mode)
        except OSError:
            link = False
        if link or not name:
            return real_path(absolute)
        return posixpath.join(self._real_dir(parent), name)

    def _real_dir(self, directory: str) -> str:
        real = self._real_dirs.get(directory)
        if real is None:
            real = self._real_dirs[directory] = real_path(directory)
        return real

    def _mapped(self, reported: str) -> str:
        for prefix, replacement in self._path_map:
            if reported.startswith(prefix):
                rest = reported[len(prefix) :].lstrip("/")
                return posixpath.join(self._root, replacement, rest)
        return reported

    def _source(self, path: str) -> SourceText | None:
        seen = self._sources.get(path, _UNREAD)
        if seen is not _UNREAD:
            return seen
        absolute = self._root_slash + path
        known = None if self._facts is None else self._facts.lookup(absolute)
        source: SourceText | None
        if known is not None:
            self.known += 1
            self.file_hashes[path], source = known
        else:
            source = self._read_source(absolute, path)
        self._sources[path] = source
        return source

    def _read_source(self, absolute: str, path: str) -> SourceText | None:
        facts = self._facts
        read: tuple[bytes, os.stat_result] | None
        try:
            read = _read(absolute, _NO_FOLLOW)
        except OSError as exc:
            read = self._read_link(absolute, path) if exc.errno == errno.ELOOP else None
            facts = None  # a link's target: ``lookup`` would stamp the link
        if read is None:
            if path not in self._linked_out:
                log.warning("dropping findings for %s: no such file under %s", path, self._root)
            return None
        data, status = read
        digest = self.file_hashes[path] = hashlib.sha256(data).hexdigest()
        if facts is not None:
            facts.note(absolute, status, digest, data)
        return SourceText(data)

    def _read_link(self, absolute: str, path: str) -> tuple[bytes, os.stat_result] | None:
        """A file ``_read`` would not open, being a link: read through the
        link when it stays in the root (None and a warning when it leaves)."""
        if not is_within(real_path(absolute), self._real_root):
            self._linked_out.add(path)
            log.warning("dropping findings for %s: it lies outside the resource root", path)
            return None
        try:
            return _read(absolute)
        except OSError:
            return None


_UNREAD = SourceText(b"")
"""A file not looked at yet. The caches are read with ``get`` and a
default, not ``try``: a parse of 10,000 files misses each once, and a
``KeyError`` cost more than the lookup."""

_NO_FOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
"""Opens a file only when it is not a symbolic link (ELOOP otherwise); 0
where the system has no such flag (then links are looked for beforehand)."""

_READ_SIZE = 1 << 16


def _read(path: str, flags: int = 0) -> tuple[bytes, os.stat_result]:
    """The file's bytes and its status as read, with system calls alone:
    ``open().read()`` builds a file object around them, which cost more
    than the read of a small file."""
    chunks = []
    descriptor = os.open(path, os.O_RDONLY | flags)
    try:
        status = os.fstat(descriptor)
        while chunk := os.read(descriptor, _READ_SIZE):
            chunks.append(chunk)
    finally:
        os.close(descriptor)
    return b"".join(chunks), status


def _plain(reported: str) -> bool:
    """A relative POSIX path ``normalize_path`` would leave as it is: no
    drive, scheme, backslash, empty, ``.`` or ``..`` segment (looked for as
    substrings of ``/path/``: no list of segments per path)."""
    if not reported or reported[0] == "/" or "\\" in reported or ":" in reported:
        return False
    text = f"/{reported}/"
    return "//" not in text and "/./" not in text and "/../" not in text


def path_in_root(
    reported: str,
    base: str,
    real_root: str | None = None,
    root: str | None = None,
    resolve: Callable[[str], str] = real_path,
) -> str | None:
    """``reported`` (relative to ``base``, absolute, or a ``file:`` URI) as a
    POSIX path relative to ``root`` (default: ``base``); None when it resolves
    (with ``resolve``), symlinks included, outside it. Raises ``NotAFilePath``
    for a URI of another scheme."""
    root = root or base
    absolute = normalize_path(
        reported if _ABSOLUTE.match(reported) else posixpath.join(base, reported)
    )
    real_root = real_root or real_path(root)
    resolved = resolve(absolute)
    if not is_within(resolved, real_root):
        return None
    # Keep the name the tool used when it is inside the root; otherwise the
    # tool saw the root through a symlink and the resolved name is the one.
    if is_within(absolute, root):
        return relative_to(absolute, root)
    return relative_to(resolved, real_root)
