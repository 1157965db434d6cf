"""Wake-ups between the processes on one data dir (ADR 0029).

SQLite stays the truth; a wake-up only says "look now". A process waiting
for events binds a Unix datagram socket in the data dir's wake directory;
a process that has committed an event sends one byte to every socket there
but its own. A socket whose process died refuses the byte and is removed.
A process that waits for nothing binds nothing, and a bound one sleeps in
the event loop's selector: no timer, no CPU while nothing happens.

Where there are no Unix sockets (Windows), or no path to bind short enough
for one, the channel is off and the event log polls as it always did.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import socket
import stat
import tempfile
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

log = logging.getLogger(__name__)

# sun_path holds 104 bytes on macOS and the BSDs (108 on Linux), its NUL included.
SOCKET_PATH_MAX = 103
_NAME_MAX = 32  # "<pid>-<8 hex digits>.sock", with room to spare
_SUFFIX = ".sock"


def wake_address(data_dir: Path) -> tuple[Path, str] | None:
    """Where the sockets of the processes on ``data_dir`` are: a directory,
    and how their names there begin.

    ``<data-dir>/wake``, unless a socket path there could be too long: then
    the user's ``acp-wake-<uid>`` in the temp dir, shared by such data dirs,
    each naming its sockets after a hash of its path (every process on the
    data dir must then see the same ``$TMPDIR``). None when neither fits,
    or without Unix sockets.
    """
    if os.name != "posix" or not hasattr(socket, "AF_UNIX"):
        return None
    data_dir = data_dir.resolve()
    beside = data_dir / "wake"
    if _fits(beside, ""):
        return beside, ""
    shared = Path(tempfile.gettempdir()) / f"acp-wake-{os.getuid()}"
    prefix = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:12] + "-"
    return (shared, prefix) if _fits(shared, prefix) else None


def _fits(directory: Path, prefix: str) -> bool:
    return len(os.fsencode(directory)) + 1 + len(prefix) + _NAME_MAX <= SOCKET_PATH_MAX


class WakeChannel:
    """This process's end: ``notify`` after a commit, ``listen`` while waiting.

    ``notify`` may be called from any thread; the rest from the event loop
    of the subscribers.
    """

    def __init__(self, directory: Path | None, prefix: str = "") -> None:
        """See ``wake_address``; no ``directory`` turns the channel off."""
        self.directory = directory
        self.prefix = prefix
        self._socket: socket.socket | None = None
        self._path: str | None = None  # of our socket, skipped by our own notify
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listeners = 0

    @classmethod
    def beside(cls, data_dir: Path) -> WakeChannel:
        address = wake_address(data_dir)
        return cls(*address) if address else cls(None)

    def notify(self) -> None:
        """Wake every other process listening on the data dir."""
        if self.directory is None:
            return
        try:
            with os.scandir(self.directory) as entries:
                peers = [
                    e.path
                    for e in entries
                    if e.name.startswith(self.prefix)
                    and e.name.endswith(_SUFFIX)
                    and e.path != self._path
                ]
        except OSError:  # no directory yet: nobody has listened
            return
        if not peers:
            return
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
            sender.setblocking(False)
            for peer in peers:
                try:
                    sender.sendto(b"\0", peer)
                except ConnectionRefusedError:  # bound by a process that is gone
                    with suppress(FileNotFoundError):
                        os.unlink(peer)
                except OSError:  # its queue is full (so a wake-up is pending), or it just left
                    pass

    def listen(self, on_wake: Callable[[], None]) -> bool:
        """Call ``on_wake`` on the running loop at each other process's
        notify, until the matching ``release``; returns whether it can (else:
        poll). Listeners share one socket, bound by the first and removed
        when the last is released."""
        self._listeners += 1
        if self._listeners == 1:
            self._bind(on_wake)
        return self._socket is not None

    def release(self) -> None:
        self._listeners -= 1
        if self._listeners == 0:
            self.close()

    def close(self) -> None:
        """Stop listening and remove our socket (idempotent)."""
        sock, path, loop = self._socket, self._path, self._loop
        self._socket = self._path = self._loop = None
        if sock is None or path is None or loop is None:
            return
        if not loop.is_closed():
            loop.remove_reader(sock.fileno())
        sock.close()
        with suppress(FileNotFoundError):
            os.unlink(path)

    def _bind(self, on_wake: Callable[[], None]) -> None:
        if self.directory is None:
            log.info("no wake-up channel here: events of other processes are polled")
            return
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        path = str(self.directory / f"{self.prefix}{os.getpid()}-{os.urandom(4).hex()}{_SUFFIX}")
        try:
            _private_directory(self.directory)
            sock.setblocking(False)
            sock.bind(path)
            loop.add_reader(sock.fileno(), _drain, sock, on_wake)
        except (OSError, NotImplementedError) as exc:  # NotImplementedError: a proactor loop
            sock.close()
            with suppress(FileNotFoundError):
                os.unlink(path)
            log.warning(
                "cannot listen for wake-ups in %s (%s): events of other processes are polled",
                self.directory,
                exc,
            )
            return
        self._socket, self._path, self._loop = sock, path, loop


def _drain(sock: socket.socket, on_wake: Callable[[], None]) -> None:
    """Read every pending wake-up (many are one), then wake."""
    with suppress(BlockingIOError):
        while True:
            sock.recv(1)
    on_wake()


def _private_directory(directory: Path) -> None:
    """Make ``directory`` (0700) unless it is there; refuse one that is not
    this user's alone: in the temp dir anyone could have made it first."""
    with suppress(FileExistsError):
        directory.mkdir(mode=0o700)
    info = directory.lstat()
    if (
        not stat.S_ISDIR(info.st_mode)
        or info.st_uid != os.geteuid()
        or stat.S_IMODE(info.st_mode) & 0o077
    ):
        raise PermissionError(f"{directory} is not a directory of this user alone")
