"""``context.inspect``: one position's findings, provenance, history, entity and snippets.

The handler is thin; the sections are computed by ``findings``,
``provenance``, ``history``, ``entities`` and ``snippets`` from the text
``source`` read. ``git blame`` starts first and runs while the rest is
computed. Parse trees are cached per file content (``syntax.Trees``), so
hovering down a file parses it once and an edit re-parses incrementally; a
long file with no tree kept is first tried from an excerpt (ADR 0030).
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar

from acp_backend.inspect.entities import (
    Definition,
    definition_at,
    definition_in_excerpt,
    first_error_line,
    module_name,
)
from acp_backend.inspect.findings import findings_at
from acp_backend.inspect.history import History
from acp_backend.inspect.languages import Language, language_of
from acp_backend.inspect.provenance import applied_here, pending_here, recorded
from acp_backend.inspect.snippets import items_for
from acp_backend.inspect.source import Source, from_text, read_source
from acp_backend.inspect.syntax import Parsed, Trees, parse_excerpt
from acp_backend.registry import Registry, normalized_real_path, resolve_path, root_entries
from acp_backend.services import Services
from acp_backend.store import Store
from acp_backend.validation.locations import path_in_root
from acp_backend.validation.service import ValidationService
from acp_client.errors import InvalidParams, OutsideRoot
from acp_client.models import ContextInfo, ContextPlan, LineHistory, Resource, ValidationResult
from acp_client.operations import ContextInspectParams
from acp_client.paths import NotAFilePath
from acp_client.text import split_lines

PAGE = 1000
INLINE_TEXT = 64_000
"""Texts up to this many code points are parsed and diffed on the event loop
(a few milliseconds at most); longer ones in a worker thread, so a 2 MB file
never stalls the other requests. A thread hop costs more than the small work."""
MINIFIED = 1000
"""Characters per line, on average, beyond which a file is not outlined: a
minified file has no definition worth a hover, and tree-sitter takes seconds
over a megabyte on one line."""
PARSE_TIME_LIMIT = 1.0
"""Seconds a parse may take before the answer goes without an entity (the
parse goes on, and its tree serves the next question)."""

RETIRED_FREE_DELAY = 0.002
"""Seconds after a parse that the trees it pushed out are freed."""


def minified(text: str) -> bool:
    """Lines longer than ``MINIFIED`` characters on average: not outlined."""
    return len(text) > MINIFIED * (text.count("\n") + 1)


R = TypeVar("R")
P = ParamSpec("P")


async def offload(size: int, work: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    if size <= INLINE_TEXT:
        return work(*args, **kwargs)
    return await asyncio.to_thread(work, *args, **kwargs)


@dataclass(frozen=True)
class InspectedFile:
    """The inspected file: its resource, its logical path, where it is on disk."""

    resource: Resource
    path: str
    file: str

    @property
    def root(self) -> str:
        """The root the file lies in (the resource's, or a sandbox's)."""
        return self.file if self.path == "." else self.file[: -len(self.path) - 1]


def locate(registry: Registry, path: str, resource: str | None) -> InspectedFile:
    """The file ``path`` names: absolute (any registered root), or with
    ``resource`` also relative to that resource's root. Never outside it."""
    if resource is None:
        file = normalized_real_path(path)
        answer = resolve_path(file, root_entries(registry.resources()))
        return InspectedFile(answer.resource, answer.logical_path, file)
    found = registry.get(resource)
    try:
        logical = path_in_root(path, found.root)
    except NotAFilePath as exc:
        raise InvalidParams(f"params.path: {exc}") from None
    if logical is None:
        raise OutsideRoot(
            f"{path} is outside resource {found.name!r} ({found.root})",
            remedy="inspect a file inside the resource",
        )
    return InspectedFile(found, logical, posixpath.join(found.root, logical))


class InspectService:
    """Parse trees (one per file, within a budget), parses in flight, blame answers."""

    def __init__(self, _: Services) -> None:
        self.trees = Trees()
        self.history = History()
        self._parsing: dict[tuple[str, str, str], asyncio.Future[Parsed]] = {}
        self._freeing = False

    async def parsed(
        self, target: InspectedFile, source: Source, language: Language
    ) -> Parsed | str | None:
        """The tree of the inspected text, or a note saying why there is none."""
        if source.text is None or source.sha256 is None:
            return None
        key = (target.resource.id, target.path, source.sha256)
        text = source.text
        if minified(text):
            return (
                f"{target.path} was not outlined: its lines are minified"
                f" (over {MINIFIED:,} characters)"
            )
        if len(text) <= INLINE_TEXT:
            parsed = self.trees.parse(key[:2], source.sha256, language, text)
            self._free_retired_later()
            return parsed
        running = self._parsing.get(key)
        if running is None:
            parsing = asyncio.to_thread(self.trees.parse, key[:2], source.sha256, language, text)
            running = asyncio.ensure_future(parsing)
            self._parsing[key] = running
            running.add_done_callback(lambda _: self._parsing.pop(key, None))
        try:
            return await asyncio.wait_for(asyncio.shield(running), PARSE_TIME_LIMIT)
        except TimeoutError:
            return f"{target.path} was not outlined: parsing took over {PARSE_TIME_LIMIT:g} s"
        finally:
            self._free_retired_later()

    def _from_excerpt(
        self, target: InspectedFile, source: Source, language: Language, line: int
    ) -> tuple[Definition, Parsed, None] | None:
        """The definition from an excerpt of a long file with no tree kept
        (``syntax.parse_excerpt``), when the excerpt holds all of it."""
        text = source.text
        if text is None or source.sha256 is None or language.data or len(text) <= INLINE_TEXT:
            return None
        if self.trees.cached((target.resource.id, target.path), source.sha256, language):
            return None
        if minified(text):
            return None
        parsed = parse_excerpt(language, text, line)
        if parsed is None:
            return None
        found = definition_in_excerpt(parsed, target.path, line)
        return None if found is None else (found, parsed, None)

    def _free_retired_later(self) -> None:
        """Free the trees this parse pushed out once the answer is on its
        way (a timer, not the next turn of the loop: the answer is sent from
        a callback of that turn)."""
        if self.trees.retired and not self._freeing:
            self._freeing = True
            asyncio.get_running_loop().call_later(RETIRED_FREE_DELAY, self._free_retired)

    def _free_retired(self) -> None:
        self._freeing = False
        self.trees.free_retired()

    async def entity(
        self, target: InspectedFile, source: Source, language: Language, line: int
    ) -> tuple[Definition | None, Parsed | None, str | None]:
        """The definition enclosing ``line``, the tree, and a note when there is neither."""
        excerpt = self._from_excerpt(target, source, language, line)
        if excerpt is not None:
            return excerpt
        parsed = await self.parsed(target, source, language)
        if not isinstance(parsed, Parsed):
            return None, None, parsed
        found = definition_at(parsed, target.path, line)
        if found is None:
            error = first_error_line(parsed)
            if error is not None:
                return None, parsed, f"{target.path} does not parse (line {error + 1})"
        return found, parsed, None


def _packages(root: str) -> Callable[[str], bool]:
    def is_package(directory: str) -> bool:
        base = os.path.join(root, directory, "__init__")
        return os.path.isfile(base + ".py") or os.path.isfile(base + ".pyi")

    return is_package


def latest_results(store: Store, resource_id: str) -> list[ValidationResult]:
    """Every validation's latest result about the resource itself."""
    results: list[ValidationResult] = []
    cursor: str | None = None
    while True:
        page, cursor = store.latest_results(resource_id, after=cursor, limit=PAGE)
        results += page
        if cursor is None:
            return results


async def _provenance(
    store: Store, target: InspectedFile, line: int, text: str | None
) -> list[ContextPlan]:
    resource_id = target.resource.id
    records = recorded(store, resource_id, target.path)
    # Only diffing the text against what plans applied is long: the thread
    # hop is for that, not for the lookups (most files have no applied plan).
    diffed = any(record.applied_text is not None for record in records)
    size = len(text or "") if diffed else 0
    applied = await offload(size, applied_here, records, target.path, line, text, {})
    return [*applied, *pending_here(store, resource_id, target.path, line)]


async def inspect(services: Services, params: ContextInspectParams) -> ContextInfo:
    target = locate(services.registry, params.path, params.resource)
    if params.text is not None:
        source = from_text(params.text)
    else:
        source = await asyncio.to_thread(read_source, target.file, target.path)
    inspector = services.service(InspectService, InspectService)
    history: asyncio.Task[LineHistory | None] | None = None
    if source.text is not None:  # git first: it runs while the rest is computed
        history = asyncio.ensure_future(
            inspector.history.line(target.file, source.text, source.sha256, params.line)
        )
    try:
        info = await _inspected(services, inspector, target, source, params)
        return info.model_copy(update={"history": await history if history is not None else None})
    finally:
        if history is not None and not history.done():
            history.cancel()


async def _inspected(
    services: Services,
    inspector: InspectService,
    target: InspectedFile,
    source: Source,
    params: ContextInspectParams,
) -> ContextInfo:
    loaded = services.service(ValidationService, ValidationService).configs.get(
        Path(target.resource.root)
    )
    specs = {config.name: config.spec() for config in loaded.validations}
    results = latest_results(services.store, target.resource.id)
    findings = findings_at(
        results,
        specs,
        target.path,
        params.line,
        params.character,
        current_sha256=source.digests,
    )
    provenance = await _provenance(services.store, target, params.line, source.text)
    language = language_of(target.path, source.text)
    definition: Definition | None = None
    parsed: Parsed | None = None
    notes: list[str] = []
    if language is not None:  # notes matter where an entity was attempted
        definition, parsed, parse_note = await inspector.entity(
            target, source, language, params.line
        )
        notes = [note for note in (source.note, parse_note) if note is not None]
    module = None
    if definition is not None and language is not None and language.name == "python":
        module = module_name(target.path, posixpath.basename(target.root), _packages(target.root))
    items = items_for(
        target.path,
        params.line,
        definition=definition,
        here=findings,
        results=results,
        text_of=_lines_of(parsed, source.text),
        language=language.name if language is not None else "",
    )
    return ContextInfo(
        resource_id=target.resource.id,
        path=target.path,
        line=params.line,
        character=params.character,
        findings=tuple(findings),
        provenance=tuple(provenance),
        entity=definition.entity(target.path, module) if definition is not None else None,
        items=items,
        notes=tuple(notes),
    )


def _lines_of(parsed: Parsed | None, text: str | None) -> Callable[[int], str]:
    """Line ``n`` of the text, by the tree's index when there is one (no split)."""
    if parsed is not None:
        return lambda n: parsed.line(n).decode("utf-8", "replace")
    lines: list[str] | None = None

    def line(n: int) -> str:
        nonlocal lines
        if lines is None:
            lines = split_lines(text or "")
        return lines[n] if n < len(lines) else ""

    return line
