"""The session: the one state of a language server session, and the only code
that changes it.

It holds what the client supports and the settings in force, the open
documents (by the URI the editor used), where each belongs (``roots``), the
resources in play, and one mirror of what the backend has told: results,
``acp.toml`` errors, declarations, plans and their sandboxes.

Only the editor's notifications (``opened``, ``edited``, ``saved``,
``closed``, settings and folders) and the backend's events (``take_event``)
change it, synchronously: none of them awaits. What a change needs from the
backend (a document's placement, a partial result's base, the sandbox of a
plan first heard of, a resource's listing) is fetched by a background task
whose outcome is taken in as one more change, so one slow call never holds
up the events behind it. After each change the features hear of it through
their hooks (``lsp_server.features``), each with a ``Snapshot``.

Requests never read these fields: they get a ``Snapshot`` (``snapshot`` /
``snapshot_of``), frozen when they arrive (ADR 0021).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Coroutine, Sequence
from dataclasses import replace
from typing import Any

from lsprotocol import types

from acp_client.client import AcpClient
from acp_client.errors import Unsupported
from acp_client.events import (
    Event,
    PlanChanged,
    ResourceChanged,
    StreamReset,
    ValidationResultEvent,
)
from acp_client.models import Resource
from acp_client.paths import CONFIG_FILE, is_within, path_to_uri
from acp_client.text import BOM, decoded
from lsp_server.calls import BackendCalls
from lsp_server.capabilities import ClientSupport
from lsp_server.documents import Document
from lsp_server.editor import Editor
from lsp_server.features import Feature
from lsp_server.mirror import Mirror
from lsp_server.notices import Notices
from lsp_server.results import ResultStore
from lsp_server.roots import FileKey, Placement, Roots, file_path
from lsp_server.settings import Settings, parse_settings
from lsp_server.snapshot import ShownCache, Snapshot
from lsp_server.workspace_edits import EditorFile

log = logging.getLogger(__name__)

FIRST_LISTING = 2.0
"""Seconds a request answered from the backend's facts (completion) waits
for them right after the editor opened the document, at most."""

Folders = Callable[[], list[str]]
"""The workspace folders' URIs as the editor sent them."""


class Session:
    def __init__(
        self,
        calls: BackendCalls,
        editor: Editor,
        notices: Notices,
        folders: Folders,
        *,
        support: ClientSupport,
        encoding: str,
        initial_settings: object,
    ) -> None:
        self.calls = calls
        self.editor = editor
        self.notices = notices
        self._folders = folders
        self.support = support
        self.encoding = encoding
        self.settings = Settings()
        self._settings_message: str | None = None
        self.roots = Roots()
        self.mirror = Mirror(calls, self.roots, self._changed, self._later)
        self.documents: dict[str, Document] = {}
        self._open: dict[FileKey, list[str]] = {}  # a file's open URIs, the latest last
        self.in_play: dict[str, Resource] = {}
        self._placing: dict[str, asyncio.Task[None]] = {}
        self._sync_lock = asyncio.Lock()
        self._resyncing: asyncio.Task[None] | None = None
        self._resync_again = False
        self._shown = ShownCache()
        self.quiet = False  # started on a sandbox: another session shows it (``_quiet_in``)
        self.followed = asyncio.Event()  # the first resync is done: the backend is followed
        self._listings: dict[str, asyncio.Task[None]] = {}  # a first listing, by resource
        self.features: Sequence[Feature] = ()
        self.take_settings(initial_settings)

    @property
    def results(self) -> ResultStore:
        return self.mirror.results

    # --- what requests and hooks see ---------------------------------------

    def snapshot(self, uri: str | None = None) -> Snapshot:
        """The session as it is now, for ``uri`` (a document) or the workspace."""
        document = self.documents.get(uri) if uri is not None else None
        placement = self._placement_of(uri)
        facts: dict[str, Any] = {}
        if placement is not None:
            key, resource_id = placement.key, placement.resource.id
            facts = {
                "held": tuple(self.results.held(key)),
                "config_error": self.results.config_error(key),
                "specs": self.mirror.specs(resource_id),
                "plans": (plans := self.mirror.plans(resource_id)),
                "bases": self.mirror.bases(plans),
                "latest": self.results.latest_in(key[0]),
                "schema": self.mirror.schema(resource_id),
                "stamp": (document.version if document else None, self.results.version(key)),
                "cache": self._shown if document is not None else None,
            }
        return Snapshot(
            self.support,
            self.encoding,
            self.settings,
            self.calls.client,
            tuple(self.roots.resources.values()),
            self.current_file,
            uri,
            document,
            placement,
            **facts,
        )

    def _placement_of(self, uri: str | None) -> Placement | None:
        """Where ``uri`` is: its open document's place, else a cached answer."""
        if uri is None:
            return None
        document = self.documents.get(uri)
        return document.placement if document is not None else self.roots.known(uri)

    async def snapshot_of(self, uri: str, *, listed: bool = False) -> Snapshot:
        """``snapshot(uri)`` once the document is placed: a request right
        after didOpen waits for its placement; one on a document not yet
        placed (opened before the backend answered) or not open has it
        resolved now. The request only waits: placing an open document is
        the session's own task, and its outcome one more change.

        ``listed``: a request answered from the backend's facts alone
        (completion) also waits, for ``FIRST_LISTING`` seconds at most, for
        the backend to be followed and the document's resource listed."""
        if listed and not self.followed.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.followed.wait(), FIRST_LISTING)
        client = self.calls.client
        if client is not None and self._placement_of(uri) is None:
            if uri in self.documents and uri not in self._placing:
                self._place_later(client, uri)
            pending = self._placing.get(uri)
            if pending is not None:
                await asyncio.wait([pending])
            elif uri not in self.documents:
                await self.calls.guarded(self.roots.place(client, uri))  # cached in roots
        placement = self._placement_of(uri)
        listing = self._listings.get(placement.resource.id) if placement else None
        if listed and listing is not None:
            await asyncio.wait([listing], timeout=FIRST_LISTING)
        return self.snapshot(uri)

    def document_at(self, key: FileKey) -> Document | None:
        """The open document of a file (the latest opened, if under several URIs)."""
        uris = self._open.get(key)
        return self.documents[uris[-1]] if uris else None

    def current_file(self, resource_id: str, path: str) -> EditorFile | None:
        """A file of a resource as the editor has it now: its open buffer
        (dirty when it differs from the disk), else the disk."""
        real = self.roots.path_of((resource_id, path))
        if real is None:
            return None
        on_disk = _read(real)
        document = self.document_at((resource_id, path))
        if document is None:
            return EditorFile(path_to_uri(real), None, on_disk)
        dirty = on_disk != document.text.removeprefix(BOM)
        return EditorFile(document.uri, document.version, document.text, dirty=dirty)

    # --- the editor's notifications ---------------------------------------

    def take_settings(self, raw: object) -> None:
        before = self.settings
        self.settings, message = parse_settings(raw)
        if message is not None and message != self._settings_message:
            self.editor.say(message, types.MessageType.Warning)
        self._settings_message = message
        changed = (
            self.settings.model_dump(by_alias=True).items()
            - before.model_dump(by_alias=True).items()
        )
        if changed:  # in the editor's log: when a change took effect, and which
            shown = ", ".join(f"{name}={value}" for name, value in sorted(changed))
            self.editor.log(f"ACP settings now in force: {shown}")

    def opened(self, uri: str, version: int | None, text: str) -> None:
        self.closed(uri)  # opened again without a close: start over
        self.documents[uri] = Document(uri, version, text)
        client = self.calls.client
        if client is not None:  # else the resync after connecting places it
            self._place_later(client, uri)

    def _place_later(self, client: AcpClient, uri: str) -> None:
        task = self.editor.spawn(self._place(client, uri))
        self._placing[uri] = task
        task.add_done_callback(lambda done: self._placed_by(uri, done))

    def _placed_by(self, uri: str, task: asyncio.Task[None]) -> None:
        if self._placing.get(uri) is task:  # not a newer placement of a reopened document
            del self._placing[uri]

    async def _place(self, client: AcpClient, uri: str) -> None:
        placement = await self.calls.guarded(self.roots.place(client, uri))
        if uri in self.documents:
            self._placed(uri, placement)

    def edited(self, uri: str, version: int | None, text: str) -> None:
        document = self.documents.get(uri)
        if document is None:
            return
        saved = document.last_saved  # the unsaved edits are measured from it
        document = self.documents[uri] = replace(document, version=version, text=text, saved=saved)
        key = document.key
        if key is not None and self.settings.clear_on_edit and self.results.clear_file(key):
            self._changed({key})
        snapshot = self.snapshot(uri)  # one for all: a snapshot is read-only
        for feature in self.features:
            feature.document_edited(snapshot)

    def saved(self, uri: str) -> None:
        self.calls.check_moved()  # a save is when sharing a server matters most
        document = self.documents.get(uri)
        if document is not None:  # what a tool reads from now on
            self.documents[uri] = replace(document, saved=None)
        placing = self._placing.get(uri)
        if placing is None:
            self._declarations_if_config(uri)
        else:  # saved right after opening: once it is placed
            placing.add_done_callback(lambda _: self._declarations_if_config(uri))
        snapshot = self.snapshot(uri)
        for feature in self.features:
            feature.document_saved(snapshot)

    def _declarations_if_config(self, uri: str) -> None:
        """A saved ``acp.toml``: list its declarations again (and whether it is broken)."""
        placement, client = self._placement_of(uri), self.calls.client
        if placement is not None and placement.logical_path == CONFIG_FILE and client:
            self._later(self.mirror.declarations(client, placement.resource))

    def closed(self, uri: str) -> None:
        document = self.documents.pop(uri, None)
        if document is None:
            return
        placing = self._placing.pop(uri, None)
        if placing is not None:
            placing.cancel()
        if document.placement is not None:
            self._unindex(uri, document.placement.key)
            self._changed({document.placement.key})  # shown as on disk from now on
        for feature in self.features:
            feature.document_closed(uri, document.placement)

    def folders_changed(self) -> None:
        self.want_resync()

    def _placed(self, uri: str, placement: Placement | None) -> None:
        """Where an open document belongs, as the backend just said."""
        if self.quiet:
            placement = None  # another session shows it
        document = self.documents[uri]
        previous = document.placement
        if previous is not None and (placement is None or previous.key != placement.key):
            self._unindex(uri, previous.key)
            self._changed({previous.key})
            for feature in self.features:
                feature.document_unplaced(uri, previous)
        document = self.documents[uri] = replace(document, placement=placement)
        if placement is None:
            return
        key = placement.key
        if uri not in self._open.setdefault(key, []):
            self._open[key].append(uri)
        self.roots.note_uri(key, uri)
        held = self.results.held(key)
        if self.settings.clear_on_edit and any(
            not document.holds(result, key[1]) for result, _ in held
        ):
            self.results.clear_file(key)  # opened with other text than the tools saw
        snapshot = self.snapshot(uri)
        for feature in self.features:
            feature.document_placed(snapshot)
        if self.results.version(key):  # it has (had) diagnostics: show them as the editor sees it
            self._changed({key})
        resource = placement.resource
        client = self.calls.client
        if resource.id not in self.mirror.filled and not self._sync_lock.locked() and client:
            self.mirror.filled.add(resource.id)  # one listing, however many documents come
            listing = self.editor.spawn(self.calls.guarded(self.mirror.list(client, resource)))
            self._listings[resource.id] = listing
            listing.add_done_callback(lambda _: self._listings.pop(resource.id, None))

    def _unindex(self, uri: str, key: FileKey) -> None:
        uris = self._open.get(key, [])
        if uri in uris:
            uris.remove(uri)
        if not uris:
            self._open.pop(key, None)
            self._shown.drop(key)

    # --- the backend's events ----------------------------------------------

    def take_event(self, event: Event) -> None:
        self.mirror.tick += 1
        changed: set[FileKey] = set()
        if isinstance(event, ValidationResultEvent):
            changed = self.mirror.take_result(event)
        elif isinstance(event, PlanChanged):
            changed = self.mirror.take_plan(event.plan, from_event=True)
        elif isinstance(event, ResourceChanged):
            self.roots.invalidate()
            if event.change == "unregistered":
                self.roots.forget(event.resource.id)
                changed = self.mirror.forget_resource(event.resource.id)
            self.want_resync()
        elif isinstance(event, StreamReset):
            log.info("event stream reset (%s): resyncing", event.reason)
            self.want_resync()
        self._changed(changed)
        snapshot = self.snapshot()
        for feature in self.features:
            feature.event(event, snapshot)

    def _changed(self, keys: Collection[FileKey]) -> None:
        if keys:
            for feature in self.features:
                feature.files_changed(keys)

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        """Fetch in the background; what it brings is taken in when it comes."""
        self.editor.spawn(self.calls.guarded(work))

    # --- resync ------------------------------------------------------------

    def want_resync(self) -> None:
        """Resync soon, once however often asked meanwhile."""
        if self._resyncing is not None:
            self._resync_again = True
            return
        self._resyncing = self.editor.spawn(self._resync_while_wanted())

    async def _resync_while_wanted(self) -> None:
        try:
            self._resync_again = True
            while self._resync_again:
                self._resync_again = False
                await self.calls.guarded(self.resync())
        finally:
            self._resyncing = None

    async def resync(self) -> None:
        """Place the folders and open documents again, then list every
        resource in play. One at a time: startup, folder changes and
        registry events may all ask. Outages propagate."""
        client = self.calls.client
        if client is None:
            return
        async with self._sync_lock:
            resources = await self._place_all(client)
            for resource_id in self.in_play.keys() - resources.keys():
                # Its folder was removed or it was unregistered: no more updates.
                self.roots.forget(resource_id)
                gone = self.in_play.pop(resource_id)
                self._changed(self.mirror.forget_resource(resource_id))
                self.editor.log(f"ACP resource out of play: {gone.name} ({gone.root})")
            for resource in resources.values():
                if resource.id not in self.in_play:
                    self.editor.log(f"ACP resource in play: {resource.name} ({resource.root})")
            self.in_play = resources
            for resource_id in self.results.resource_ids() - resources.keys():
                self._changed(self.mirror.forget_resource(resource_id))
            for resource in resources.values():
                await self.mirror.list(client, resource)
        self.followed.set()
        snapshot = self.snapshot()
        for feature in self.features:
            feature.resynced(snapshot)

    async def _place_all(self, client: AcpClient) -> dict[str, Resource]:
        """The resources in play: the folders' own, those nested in them and
        those of open documents."""
        if not client.supports("resource.resolve"):
            self.notices.degraded("resource.resolve")
            return {}
        self.roots.set_folders(self._folders())
        folders = [path for path in map(file_path, self._folders()) if path is not None]
        resources: dict[str, Resource] = {}
        unregistered: list[str] = []
        sandboxes: list[Placement] = []
        try:
            for folder in folders:
                placement = await self.roots.place(client, folder)
                if placement is None:
                    unregistered.append(folder)
                elif placement.sandbox:
                    sandboxes.append(placement)
                else:
                    resources[placement.resource.id] = placement.resource
            if sandboxes and not resources and not unregistered:
                return self._quiet_in(sandboxes)
            listed = await self.calls.if_allowed("resource.list", client.resource_list())
            for resource in listed or ():
                if any(is_within(resource.root, folder) for folder in folders):
                    self.roots.remember(resource)
                    resources[resource.id] = resource
            for uri in list(self.documents):
                placement = await self.roots.place(client, uri)
                if uri in self.documents:
                    self._placed(uri, placement)
                if placement is not None:
                    resources[placement.resource.id] = placement.resource
        except Unsupported as exc:  # a backend that did not list its operations
            self.notices.degraded(exc.operation)
            return {}
        self.notices.unregistered(unregistered, resources.values())
        return resources

    def _quiet_in(self, sandboxes: list[Placement]) -> dict[str, Resource]:
        """A session started on a plan's sandbox (an editor that took the
        sandbox's ``acp.toml`` for a project root): the session of the
        resource shows the sandbox's files, so this one shows nothing."""
        self.quiet = True
        for placement in sandboxes:
            self.notices.once(
                f"ACP: {placement.sandbox_root} is the sandbox of a plan of "
                f"{placement.resource.name}; the session of {placement.resource.root} shows "
                "its files, this one stays quiet (docs/editors.md: sandboxes)."
            )
        return {}

    def backend_lost(self) -> None:
        for feature in self.features:
            feature.backend_lost()


def _read(path: str) -> str | None:
    """A file's text as an editor would show it; None when it is not there."""
    try:
        with open(path, "rb") as handle:
            return decoded(handle.read())
    except OSError:
        return None
