"""What parsing children learn about files, kept by the fork server for the next ones.

Converting a finding needs its file's text (columns) and sha256 (the
result's ``file_hashes``): ten validators over the same 10,000 files read,
hash and split each file ten times, about a third of each parse. So a child
sends what it read to the fork server once its verdict is out; the fork
server keeps it, bounded by heap, and every child forked later inherits it.

An entry is used only while the file's ``lstat`` gives the same stamp
(device, inode, size, mtime, ctime), and learned only from a file whose
ctime was already ``SETTLED_NS`` old when it was read. Time stamps are
coarse: a file changed twice within one tick of the file system's clock,
once before the read and once after, could keep its stamp (git's "racily
clean" files); a file that had not changed for a while gets a later ctime
from any change after the read. A file being saved as the run starts is
simply read again next time.

Within one validation run, a file is taken as it was first read in that
run: an entry read by a parse of the run is used by the run's later parses
without the ``lstat`` (as a build tool stats each input once per build).
Ten validators over 10,000 files made 90,000 such calls, a third of what a
parse spent on files it had not read itself. A result's ``file_hashes``
still names the text its positions were converted on; a file changed later
in the run is read again by the next run, and a save starts that run and
cancels what is left of this one (``runs``).
"""

from __future__ import annotations

import os
import stat
import time
from collections import OrderedDict
from collections.abc import Iterable

from acp_backend.validation.positions import SourceText

Stamp = tuple[int, int, int, int, int]
"""(device, inode, size, mtime ns, ctime ns): what changes when a file does."""

Learned = tuple[str, Stamp, str, bytes, str | None]
"""(absolute path, stamp, sha256 hex, bytes, run id): what a child sends for
a file it read, and during which validation run (None: outside any)."""

SETTLED_NS = 100_000_000  # a file's ctime this far back, at least, when it was read
CAPACITY = 32 * 2**20  # bytes of heap the fork server keeps, about
MAX_FILE = 2**20  # bytes: a larger file is read each time
_ENTRY_HEAD = 850  # heap of an entry beyond its bytes (path, stamp, digest, tuples, text)
_LINE_HEAD = 8  # heap of a line: where it starts (``SourceText``)


def stamp_of(status: os.stat_result) -> Stamp:
    return (
        status.st_dev,
        status.st_ino,
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
    )


class FileFacts:
    """Files' digests and split text, by absolute path: learned in the fork
    server (``learn``), looked up in its children (``lookup``), where new
    files read are collected (``note``) and sent back as ``fresh``."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._size = 0
        self._entries: OrderedDict[str, tuple[Stamp, str, SourceText, int, str | None]] = (
            OrderedDict()
        )
        self.fresh: list[Learned] = []
        self._fresh_size = 0
        self._since = time.time_ns()  # the start of this process's reads (a child's fork)
        self._run: str | None = None  # the validation run this process parses for

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, path: str) -> tuple[str, SourceText] | None:
        """The digest and text of the file at ``path`` when it has not changed
        since they were learned; None otherwise (or when it is a link now)."""
        entry = self._entries.get(path)
        if entry is None:
            return None
        if self._run is not None and entry[4] == self._run:  # read in this run: as it was
            return entry[1], entry[2]
        try:
            status = os.lstat(path)
        except OSError:
            return None
        if stat.S_ISLNK(status.st_mode) or stamp_of(status) != entry[0]:
            return None
        return entry[1], entry[2]

    def note(self, path: str, status: os.stat_result, digest: str, data: bytes) -> None:
        """Keep a file just read to send it back, if it had settled and fits."""
        if status.st_ctime_ns > self._since - SETTLED_NS or len(data) > MAX_FILE:
            return
        if self._fresh_size + len(data) > self._capacity:
            return
        self._fresh_size += len(data)
        self.fresh.append((path, stamp_of(status), digest, data, self._run))

    def learn(self, learned: Iterable[Learned]) -> None:
        """Take in what a child read, the oldest entries making room."""
        for path, file_stamp, digest, data, run in learned:
            old = self._entries.get(path)
            if old is not None:
                if old[0] == file_stamp:  # read again (two parses at once, or a later run)
                    self._entries[path] = (*old[:4], run)  # one copy, of the latest run
                    continue
                del self._entries[path]
                self._size -= old[3]
            source = SourceText(data)
            cost = _ENTRY_HEAD + len(data) + _LINE_HEAD * source.line_count()
            if cost > self._capacity:
                continue
            self._entries[path] = (file_stamp, digest, source, cost, run)
            self._size += cost
            while self._size > self._capacity:
                self._size -= self._entries.popitem(last=False)[1][3]

    def forked(self, run: str | None = None) -> None:
        """In a new child, parsing for validation run ``run``: nothing read yet."""
        self.fresh = []
        self._fresh_size = 0
        self._since = time.time_ns()
        self._run = run
