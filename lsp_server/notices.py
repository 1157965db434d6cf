"""What the session tells the user about the backend: each thing once.

An outage is said once and lasts until the event stream has proven healthy
(the session calls ``healthy``); the connection is logged once per outage
and whenever it moves elsewhere; an operation the backend lacks is said once,
naming it; a folder outside every resource is announced once, with a message
only where it declares validations (an ``acp.toml``) and a log line
elsewhere, so an editor opened in an unrelated project is not nagged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from lsprotocol import types

from acp_client.paths import CONFIG_FILE, is_within
from lsp_server.backend import CONVENIENCES, degraded_message

if TYPE_CHECKING:
    from acp_client.models import Resource

log = logging.getLogger(__name__)

REGISTER_HINT = "acp-backend resource add {path}"

Say = Callable[[str, types.MessageType], None]
Log = Callable[[str], None]


class Notices:
    def __init__(self, say: Say, log_line: Log) -> None:
        self._say = say
        self._log = log_line
        self._announced: set[str] = set()
        self._degraded: set[str] = set()
        self.outage_said = False  # for the current outage, until the stream proves healthy
        self._up_logged = False  # "connected"/"back" logged since the last outage was said
        self._described = ""  # the backend last logged as connected

    def outage(self, exc: Exception) -> None:
        log.warning("ACP backend unavailable: %s", exc)
        if not self.outage_said:
            self.outage_said = True
            self._up_logged = False
            self._say(
                f"ACP backend unavailable: {exc}. Diagnostics stay as they were and update "
                "when it is back; the language server reconnects by itself.",
                types.MessageType.Warning,
            )

    def healthy(self) -> None:
        """The stream stayed up: a next outage is a new one, said again."""
        self.outage_said = False

    def connected(self, description: str) -> None:
        """Log the connection once per outage, and whenever it moved elsewhere."""
        if not self._up_logged or description != self._described:
            self._up_logged = True
            self._described = description
            again = "back" if self.outage_said else "connected"
            self._log(f"ACP backend {again}: {description}")

    def once(self, line: str) -> None:
        """A line in the editor's log, once per session."""
        if line not in self._announced:
            self._announced.add(line)
            self._log(line)

    def degraded(self, operation: str) -> None:
        """The backend lacks ``operation``: say once what that turns off."""
        if operation not in self._degraded:
            self._degraded.add(operation)
            if operation in CONVENIENCES:
                self._log(degraded_message(operation))
            else:
                self._say(degraded_message(operation), types.MessageType.Warning)

    def unregistered(self, folders: Iterable[str], known: Iterable[Resource]) -> None:
        """Folders in no resource, each once; true about resources nested in them."""
        resources = list(known)
        for folder in folders:
            if folder in self._announced:
                continue
            self._announced.add(folder)
            nested = sorted(r.name for r in resources if is_within(r.root, folder))
            where = (
                f"diagnostics show only inside its registered resource(s) {', '.join(nested)}"
                if nested
                else "validation diagnostics are off there"
            )
            text = (
                f"ACP: {folder} is not in a registered resource, so {where}. Register it "
                f"with: {REGISTER_HINT.format(path=folder)}. The language server picks it up "
                "without a restart."
            )
            if os.path.isfile(os.path.join(folder, CONFIG_FILE)):
                self._say(text, types.MessageType.Info)
            else:
                self._log(text)
