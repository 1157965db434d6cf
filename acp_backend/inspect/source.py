"""The text ``context.inspect`` looks at: the client's, else the file, bounded.

Only a regular file is opened (a FIFO would block the read forever), at most
``MAX_INSPECT_TEXT`` bytes of it, and only when it is UTF-8 text without NUL
bytes. Anything else is a note saying why, never an exception or a hang.

Its text is the file as an editor shows it: a UTF-8 BOM is dropped (positions
never count one), while its digests still name the file's bytes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass

from acp_client.operations import MAX_INSPECT_TEXT
from acp_client.text import BOM, BOM_BYTES, bare_and_behind_bom

BINARY_PROBE = 8192
"""How many leading bytes are searched for a NUL (git's test for binary)."""


@dataclass(frozen=True)
class Source:
    text: str | None
    sha256: str | None = None  # of the UTF-8 bytes: comparable with a result's file_hashes
    note: str | None = None  # why there is no text
    digests: frozenset[str] = frozenset()
    """Every file's sha256 this text is: a client's text (an editor's buffer,
    without a BOM) is the file with or without one in front."""


def from_text(text: str) -> Source:
    data = text.encode("utf-8", "surrogatepass")
    bare, behind = bare_and_behind_bom(data)
    sha256 = behind if data.startswith(BOM_BYTES) else bare
    return Source(text, sha256, digests=frozenset((bare, behind)))


def read_source(path: str, shown: str, limit: int = MAX_INSPECT_TEXT) -> Source:
    """The text of the file at ``path`` (``shown`` names it in notes)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return Source(None, note=f"{shown} does not exist")
    except OSError as exc:
        return Source(None, note=f"{shown} cannot be read: {exc.strerror}")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return Source(None, note=f"{shown} is not a regular file")
        if info.st_size > limit:
            return Source(None, note=f"{shown} is larger than {limit:,} bytes: not read")
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew since the stat
        return Source(None, note=f"{shown} is larger than {limit:,} bytes: not read")
    if b"\0" in data[:BINARY_PROBE]:
        return Source(None, note=f"{shown} is a binary file: not read")
    try:
        text = data.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError:
        return Source(None, note=f"{shown} is not UTF-8 text: not read")
    sha256 = hashlib.sha256(data).hexdigest()
    return Source(text, sha256, digests=frozenset((sha256,)))
