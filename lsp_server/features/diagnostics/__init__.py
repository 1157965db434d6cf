"""Diagnostics: what the validations found, in the editor, live, push or pull.

The session holds the results and says which files they changed
(``files_changed``); this feature sends those files: coalesced pushes
(``publisher``) for clients that cannot pull, a ``workspace/diagnostic/
refresh`` for those that can, and the pull reports themselves. It reads
the session through the presenter and never changes it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from lsprotocol import types

from acp_client.events import Event, ValidationCompleted, ValidationStarted
from lsp_server.calls import BackendCalls
from lsp_server.editor import Editor
from lsp_server.features import Feature
from lsp_server.features.diagnostics.presenter import Presenter, Source
from lsp_server.features.diagnostics.publisher import CoalescingPublisher
from lsp_server.roots import FileKey
from lsp_server.snapshot import Snapshot


class Diagnostics(Feature):
    def __init__(self, editor: Editor, calls: BackendCalls, source: Source) -> None:
        super().__init__(editor, calls)
        self.presenter = Presenter(source)
        self._publisher: CoalescingPublisher[FileKey] = CoalescingPublisher(
            self._publish,
            backed_up=editor.backed_up,
            in_view=self.presenter.is_open,  # refreshed even in a hold
        )
        self._refresher: CoalescingPublisher[str] = CoalescingPublisher(self._refresh)
        self._pull = False
        self._holding_for: set[str] = set()  # runs of several validations in progress

    def start(self, snapshot: Snapshot) -> None:
        self._pull = snapshot.support.pull_diagnostics
        self.presenter.encoding = snapshot.encoding
        self.presenter.related_information = snapshot.support.related_information
        self.presenter.code_description = snapshot.support.code_description

    def close(self) -> None:
        self._publisher.close()
        self._refresher.close()

    def files_changed(self, keys: Collection[FileKey]) -> None:
        if self._pull:
            self._refresher.changed("workspace")
        else:
            self._publisher.changed_all(keys)

    def document_edited(self, snapshot: Snapshot) -> None:
        """A push client shows what was sent where it was sent: an unsaved
        edit that moves a finding's line, or changes it, sends the file
        again (placed on the buffer, ``lsp_server.drift``). A pull client
        asks again after an edit itself."""
        key = snapshot.key
        if not self._pull and key is not None and self.presenter.has_sent(key):
            self._publisher.changed(key)

    # --- a run of several validations: about one publish per file ----------

    def event(self, event: Event, snapshot: Snapshot) -> None:
        """Hold results back while a run of several validations is in
        progress, for a bounded time (``CoalescingPublisher.hold``)."""
        if isinstance(event, ValidationStarted):
            in_play = any(resource.id == event.resource_id for resource in snapshot.resources)
            if len(event.validations) > 1 and in_play:
                self._holding_for.add(event.run_id)
                self._publisher.hold()
        elif isinstance(event, ValidationCompleted) and event.run_id in self._holding_for:
            self._holding_for.discard(event.run_id)
            if not self._holding_for:
                self._publisher.release()

    def backend_lost(self) -> None:
        self._end_hold()

    def resynced(self, snapshot: Snapshot) -> None:
        self._end_hold()  # runs whose end this session may have missed

    def _end_hold(self) -> None:
        self._holding_for.clear()
        self._publisher.release()

    # --- sending -----------------------------------------------------------

    def _publish(self, key: FileKey) -> None:
        for params in self.presenter.publish_params(key):  # JSON already
            self.editor.publish(params)

    def _refresh(self, _: str) -> None:
        self.editor.refresh_diagnostics()

    def document_report(
        self, snapshot: Snapshot, previous: str | None
    ) -> types.DocumentDiagnosticReport:
        if snapshot.key is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        return self.presenter.document_report(snapshot.key, previous)

    def workspace_report(
        self, snapshot: Snapshot, previous: Iterable[types.PreviousResultId]
    ) -> types.WorkspaceDiagnosticReport:
        known = {item.uri: item.value for item in previous}
        return types.WorkspaceDiagnosticReport(items=self.presenter.workspace_reports(known))
