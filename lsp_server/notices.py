"""What the session tells the user about the backend: each thing once.

An outage is said once and lasts until the event stream has proven healthy
(the session calls ``healthy``); a refusal (``backend.is_refusal``) is said
once, with what would end it, until the stream has proven healthy or the
backend says something else; the connection is logged once per outage
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
        self._refusal_said = ""  # the refusal said, until the stream proves healthy

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

    def refused(self, exc: Exception, token_file: str | None) -> None:
        """The backend refuses this client; retrying unchanged will not help."""
        log.warning("ACP backend refused the connection: %s", exc)
        if str(exc) == self._refusal_said:
            return
        self._refusal_said = str(exc)
        self._up_logged = False
        token = f"the token file ({token_file})" if token_file else "the token file"
        self._say(
            f"ACP backend refused the connection: {exc}. The language server tries again "
            f"when {token} or the settings change, on a save or a command, and once a minute.",
            types.MessageType.Error,
        )

    def healthy(self) -> None:
        """The stream stayed up: a next outage or refusal is a new one, said again."""
        self.outage_said = False
        self._refusal_said = ""

    def connected(self, description: str) -> None:
        """Log the connection once per outage, and whenever it moved elsewhere."""
        if not self._up_logged or description != self._described:
            self._up_logged = True
            self._described = description
            again = "back" if self.outage_said or self._refusal_said else "connected"
            self._log(f"ACP backend {again}: {description}")

    def once(self, line: str) -> None:
        """A line in the editor's log, once per session."""
        if line not in self._announced:
            self._announced.add(line)
            self._log(line)

    def degraded(self, operation: str, refusal: Exception | None = None) -> None:
        """The backend lacks ``operation``, or refuses it to this client: say
        once what that turns off."""
        if operation not in self._degraded:
            self._degraded.add(operation)
            if operation in CONVENIENCES:
                self._log(degraded_message(operation, refusal))
            else:
                self._say(degraded_message(operation, refusal), types.MessageType.Warning)

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
