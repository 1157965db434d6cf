"""Hover: why this code is what it is, from ``context.inspect``.

The backend is asked about a whole line (no character) and the answer is
cached per (document, version, line), then narrowed to the hovered
character here: moving along a line costs nothing, and identical concurrent
hovers share one call (``SharedCalls``). An editor's ``$/cancelRequest``
cancels the handler, and the backend call with the last waiter. Anything
that would make a hover slow or wrong (no backend, a backend without
``context.inspect``, an unregistered folder, a refusal, ``TIMEOUT`` elapsed)
answers null.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import replace

from lsprotocol import types

from acp_client.client import AcpClient
from acp_client.events import STALE_AFTER, Event
from acp_client.models import ContextFinding, ContextInfo
from acp_client.operations import MAX_INSPECT_TEXT
from acp_client.paths import CONFIG_FILE
from lsp_server.calls import BackendCalls, SharedCalls
from lsp_server.declared import field_doc, field_named
from lsp_server.editor import Editor
from lsp_server.features import Feature
from lsp_server.features.hover.render import at_character, render
from lsp_server.marks import indexes
from lsp_server.positions import code_points
from lsp_server.remedies import NONE, Remedies, remedies
from lsp_server.roots import Placement, file_path
from lsp_server.snapshot import Snapshot
from lsp_server.toml_place import VALIDATIONS, key_at

log = logging.getLogger(__name__)

TIMEOUT = 3.0
"""Seconds a hover waits for the backend before answering null."""
CACHE_LINES = 512

LineKey = tuple[str, int, int, int]  # uri, version, line, generation


class Hover(Feature):
    def __init__(self, editor: Editor, calls: BackendCalls) -> None:
        super().__init__(editor, calls)
        self._lines: OrderedDict[LineKey, ContextInfo] = OrderedDict()
        self._calls: SharedCalls[LineKey, ContextInfo | None] = SharedCalls()
        # Bumped whenever what the backend knows may have changed: answers
        # (and calls) of an older generation are never reused.
        self._generation = 0

    async def hover(self, snapshot: Snapshot, position: types.Position) -> types.Hover | None:
        """What the backend knows of the line (``context.inspect``), after
        the doc of the ``acp.toml`` key under the cursor, if it is on one."""
        about_key = _key_doc(snapshot, position)
        found = await self._inspected(snapshot, position)
        if about_key is None:
            return None if found is None else types.Hover(contents=found)
        markdown = snapshot.support.hover_markdown
        text = about_key if markdown else about_key.replace("**", "").replace("`", "")
        if found is not None:
            text += ("\n\n---\n\n" if markdown else "\n\n") + found.value
        kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
        return types.Hover(contents=types.MarkupContent(kind=kind, value=text))

    async def _inspected(
        self, snapshot: Snapshot, position: types.Position
    ) -> types.MarkupContent | None:
        client, document = snapshot.backend, snapshot.document
        if client is None or document is None or snapshot.placement is None:
            return None
        key = (document.uri, document.version or 0, position.line, self._generation)
        info = self._lines.get(key)
        if info is None:
            try:
                async with asyncio.timeout(TIMEOUT):  # no task of its own, unlike wait_for
                    info = await self._calls.run(
                        key, lambda: self._inspect(client, key, document.text)
                    )
            except TimeoutError:
                log.warning("context.inspect took over %s s: no hover", TIMEOUT)
                return None
            if info is None:
                return None
        else:
            self._lines.move_to_end(key)
        text = document.line(position.line)
        character = code_points(text, position.character, snapshot.encoding)
        here = at_character(as_shown(snapshot, info), position.line, character)
        offered = [_remedies(snapshot, found) for found in here.findings]
        return render(here, snapshot.support.hover_markdown, offered)

    async def _inspect(self, client: AcpClient, key: LineKey, source: str) -> ContextInfo | None:
        path = file_path(key[0])
        if path is None:
            return None
        # The editor's text, so an unsaved buffer is what gets summarised.
        text = source if len(source) <= MAX_INSPECT_TEXT else None
        info = await self.calls.guarded(client.context_inspect(path, key[2], text=text))
        if info is not None and key[3] == self._generation:
            self._lines[key] = info
            if len(self._lines) > CACHE_LINES:
                self._lines.popitem(last=False)
        return info

    # --- what invalidates answers ------------------------------------------

    def event(self, event: Event, snapshot: Snapshot) -> None:
        if isinstance(event, STALE_AFTER):
            self._forget()

    def backend_lost(self) -> None:
        self._forget()

    def document_unplaced(self, uri: str, placement: Placement) -> None:
        self._forget()

    def document_closed(self, uri: str, placement: Placement | None) -> None:
        for key in [key for key in self._lines if key[0] == uri]:
            del self._lines[key]

    def _forget(self) -> None:
        self._generation += 1
        self._lines.clear()


def as_shown(snapshot: Snapshot, info: ContextInfo) -> ContextInfo:
    """The line's findings where the editor shows them. The backend places
    findings in the text each run read; the buffer may have moved on since
    (``stale``). Those are taken from the session instead, placed through
    the unsaved edits as the diagnostics are (``lsp_server.drift``): a
    finding whose line moved shows on its new line, one whose line changed
    (or read before a save whose run has not answered) shows nowhere."""
    fresh = tuple(found for found in info.findings if not found.stale)
    return info.model_copy(update={"findings": fresh + tuple(_moved_here(snapshot, info.line))})


def _moved_here(snapshot: Snapshot, line: int) -> Iterator[ContextFinding]:
    """The findings of results read on an earlier text that land on ``line``."""
    placement = snapshot.placement
    if placement is None:
        return
    for result, shown in snapshot.held:
        reading = snapshot.reading(result)
        if reading.moved is None:
            continue  # as read (the backend answered for it), or nowhere
        spec = snapshot.specs.get(result.validation)
        for index in indexes(shown):
            finding = None if index is None else result.findings[index]
            where = None if finding is None else finding.location
            placed = None if where is None else reading.moved.location(where)
            if finding is None or placed is None or not placed.covers(line):
                continue
            yield ContextFinding(
                validation=result.validation,
                mode=result.mode,
                description=spec.description if spec is not None else "",
                passed=result.passed,
                finding=replace(finding, location=placed),
                result_id=result.id,
                run_id=result.run_id,
                found_at=result.finished_at,
                stale=True,
            )


def _remedies(snapshot: Snapshot, found: ContextFinding) -> Remedies:
    result = snapshot.shown(found.result_id)
    return NONE if result is None else remedies(snapshot, result, found.finding)


def _key_doc(snapshot: Snapshot, position: types.Position) -> str | None:
    """The doc of the ``[[validations]]`` key under the cursor in ``acp.toml``."""
    document, placement, schema = snapshot.document, snapshot.placement, snapshot.schema
    if document is None or placement is None or schema is None:
        return None
    if placement.logical_path != CONFIG_FILE:
        return None
    lines = document.lines
    text = lines[position.line] if position.line < len(lines) else ""
    found = key_at(lines, position.line, code_points(text, position.character, snapshot.encoding))
    if found is None or found[1] != VALIDATIONS:
        return None
    field = field_named(schema, found[0])
    return None if field is None else field_doc(field)
