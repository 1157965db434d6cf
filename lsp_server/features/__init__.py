"""The server's features, one room each, none reaching into another.

A feature is built with what it may use: the editor (``lsp_server.editor``)
and the backend's calls (``lsp_server.calls.BackendCalls``); the
diagnostics feature also reads the session's results. It gets a
``Snapshot`` with every request and every hook, and keeps only state of its
own (caches, what it sent, timers). The session (``lsp_server.session``)
owns what they share and calls the hooks below, synchronously, after each
change: a hook never awaits; work that must await runs as a task
(``editor.spawn``). ``lsp_server.handlers`` routes each LSP method to one
feature method, and ``lsp_server.commands`` lists the commands, which a
feature claims in ``runs``.

The features load after the ``initialize`` answer (``lsp_server.preload``,
ADR 0016): this package imports nothing heavy itself, and the server builds
them, with the session, through ``lsp_server.features.loaded``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lsprotocol import types

    from acp_client.events import Event
    from lsp_server.calls import BackendCalls
    from lsp_server.code_actions import ActionRequest
    from lsp_server.completion import CompletionRequest
    from lsp_server.editor import Editor
    from lsp_server.roots import FileKey, Placement
    from lsp_server.snapshot import Snapshot

Runner = Callable[["Snapshot", Any], Awaitable[object]]
"""Runs one command: the snapshot of its argument's document (or of the
workspace), and its parsed argument."""


class Feature:
    """Base of every feature: hooks with no effect until overridden."""

    runs: Mapping[str, Runner] = {}
    """The commands (``lsp_server.commands``) this feature carries out."""

    def __init__(self, editor: Editor, calls: BackendCalls) -> None:
        self.editor = editor
        self.calls = calls

    def actions(self, request: ActionRequest) -> Iterable[types.CodeAction]:
        """The code actions it offers at a range (``lsp_server.code_actions``)."""
        return ()

    def completions(self, request: CompletionRequest) -> Iterable[types.CompletionItem]:
        """What it completes at the cursor (``lsp_server.completion``)."""
        return ()

    def start(self, snapshot: Snapshot) -> None:
        """At ``initialized``, settings read: start background work."""

    def close(self) -> None:
        """At shutdown: drop timers (tasks are the session's to cancel)."""

    def backend_lost(self) -> None:
        """The backend went away; what it was doing will not report back."""

    def resynced(self, snapshot: Snapshot) -> None:
        """The session rebuilt its mirror from the backend (after a
        (re)connection, a registry or folder change, a lost event position)."""

    def event(self, event: Event, snapshot: Snapshot) -> None:
        """A backend event, in order, after the session took it in."""

    def files_changed(self, keys: Collection[FileKey]) -> None:
        """What these files show changed (results, documents, placements)."""

    def document_placed(self, snapshot: Snapshot) -> None:
        """An open document was placed (again) in a resource: at its opening
        and at every resync."""

    def document_unplaced(self, uri: str, placement: Placement) -> None:
        """An open document no longer belongs where it was placed."""

    def document_edited(self, snapshot: Snapshot) -> None:
        """An open document's text changed (its placement may be None yet)."""

    def document_saved(self, snapshot: Snapshot) -> None:
        """A document was saved (its placement may be None yet)."""

    def document_closed(self, uri: str, placement: Placement | None) -> None:
        """A document was closed."""
