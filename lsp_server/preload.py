"""The heavy modules, loaded in the background once ``initialize`` is answered.

Answering ``initialize`` needs only the LSP types, the handlers and what the
client supports; the features, the settings model and the ACP client under
them (pydantic, httpx) load afterwards, in a thread started at
``initialized``, while the editor answers ``workspace/configuration`` and
opens its documents (ADR 0016).

Two threads importing at once can deadlock on a circular import (Python
then raises ``_DeadlockError``), so the event loop never imports these while
the thread runs: whoever needs them first calls ``wait`` (or awaits
``loaded``), which returns at once when the thread is done or never started.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import Future

log = logging.getLogger(__name__)

HEAVY = (
    "lsp_server.settings",  # pydantic
    "lsp_server.session",  # the session, every feature, the client's models and events
    "lsp_server.features.loaded",
    "acp_client.connect",  # discovery, the transports, httpx
)
"""What answering ``initialize`` must not wait for; tested in
``tests/unit/lsp/test_lsp_startup_imports.py``."""


class Preload:
    def __init__(self, modules: Sequence[str] = HEAVY) -> None:
        self._modules = tuple(modules)
        self._done: Future[None] | None = None

    def start(self) -> None:
        """Begin loading in a thread (once)."""
        if self._done is None:
            self._done = Future()
            # Not a daemon: an exit must wait for the import in progress (a
            # thread stopped at exit inside pydantic-core's Rust aborts the
            # process); at worst it waits for the rest of the load.
            threading.Thread(target=self._load, name="acp-lsp-preload").start()

    def _load(self) -> None:
        assert self._done is not None
        try:
            for name in self._modules:
                importlib.import_module(name)
        except Exception as exc:  # the loop's own import raises it again, where it is used
            log.debug("preloading failed: %r", exc)
        finally:
            self._done.set_result(None)

    def wait(self) -> None:
        """Block until the thread is done; at once if it never started."""
        if self._done is not None:
            self._done.result()

    async def loaded(self) -> None:
        """``wait`` without blocking the event loop."""
        if self._done is not None:  # shielded: a cancelled waiter must not cancel the load
            await asyncio.shield(asyncio.wrap_future(self._done))
