"""``context.inspect``: one position's findings, provenance and enclosing definition.

The handler is thin; the sections are computed by ``findings``,
``provenance`` and ``entities`` from the text ``source`` read. Outlines are
cached per file content, so hovering down a file parses it once.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar

from acp_backend.handlers import handles
from acp_backend.inspect.entities import Outline, Unparsable, is_python, module_name
from acp_backend.inspect.findings import findings_at
from acp_backend.inspect.provenance import applied_here, pending_here, recorded
from acp_backend.inspect.source import Source, from_text, read_source
from acp_backend.registry import Registry, normalized_real_path, resolve_path, root_entries
from acp_backend.services import Services
from acp_backend.store import Store
from acp_backend.validation.locations import path_in_root
from acp_backend.validation.service import ValidationService
from acp_client.errors import InvalidParams, OutsideRoot
from acp_client.models import ContextInfo, ContextPlan, Entity, Resource, ValidationResult
from acp_client.operations import ContextInspectParams
from acp_client.paths import NotAFilePath

OUTLINE_BUDGET = 64_000
"""Code points of source whose outlines stay cached: a few files. A held
syntax tree is ~85 bytes per code point and slows every garbage collection,
so hovering down an unchanged file parses it once, and little more is kept."""
PAGE = 1000
INLINE_TEXT = 64_000
"""Texts up to this many code points are parsed and diffed on the event loop
(about a millisecond); longer ones in a worker thread, so a 2 MB file never
stalls the other requests. A thread hop costs more than the small work."""

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
    """Outlines per (path, content hash), the most recent kept while their
    texts add up to ``OUTLINE_BUDGET`` code points."""

    def __init__(self, _: Services) -> None:
        self._outlines: OrderedDict[tuple[str, str], tuple[Outline | str, int]] = OrderedDict()
        self._held = 0

    async def entity(
        self, target: InspectedFile, source: Source, line: int
    ) -> tuple[Entity | None, str | None]:
        """The definition enclosing ``line`` and a note when the file does not parse."""
        if source.text is None or source.sha256 is None:
            return None, None
        outline = await self._outline(target.path, source.text, source.sha256)
        if isinstance(outline, str):
            return None, outline
        found = await offload(len(source.text), outline.at, line)
        if found is None:
            return None, None
        module = module_name(target.path, posixpath.basename(target.root), _packages(target.root))
        return found.entity(module), None

    async def _outline(self, path: str, text: str, sha256: str) -> Outline | str:
        key = (path, sha256)
        held = self._outlines.get(key)
        if held is not None:
            self._outlines.move_to_end(key)
            return held[0]
        outline = await offload(len(text), _parse, text, path)
        if len(text) <= OUTLINE_BUDGET:
            self._outlines[key] = (outline, len(text))
            self._held += len(text)
            while self._held > OUTLINE_BUDGET:
                _, (_, size) = self._outlines.popitem(last=False)
                self._held -= size
        return outline


def _parse(text: str, path: str) -> Outline | str:
    try:
        return Outline(text, path)
    except Unparsable as exc:
        return str(exc)


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


def _provenance(
    store: Store, target: InspectedFile, line: int, text: str | None
) -> list[ContextPlan]:
    resource_id = target.resource.id
    applied = applied_here(recorded(store, resource_id, target.path), target.path, line, text, {})
    return [*applied, *pending_here(store, resource_id, target.path, line)]


@handles("context.inspect")
async def inspect(services: Services, params: ContextInspectParams) -> ContextInfo:
    target = locate(services.registry, params.path, params.resource)
    python = is_python(target.path)
    if params.text is not None:
        source = from_text(params.text)
    else:
        source = await asyncio.to_thread(read_source, target.file, target.path)
    loaded = services.service(ValidationService, ValidationService).configs.get(
        Path(target.resource.root)
    )
    specs = {config.name: config.spec() for config in loaded.validations}
    findings = findings_at(
        latest_results(services.store, target.resource.id),
        specs,
        target.path,
        params.line,
        params.character,
        current_sha256=source.digests,
    )
    size = len(source.text or "")
    provenance = await offload(size, _provenance, services.store, target, params.line, source.text)
    entity, parse_note = (
        await services.service(InspectService, InspectService).entity(target, source, params.line)
        if python
        else (None, None)
    )
    # A note matters where a section was attempted: the entity, for Python.
    notes = [note for note in (source.note, parse_note) if note is not None and python]
    return ContextInfo(
        resource_id=target.resource.id,
        path=target.path,
        line=params.line,
        character=params.character,
        findings=tuple(findings),
        provenance=tuple(provenance),
        entity=entity,
        notes=tuple(notes),
    )
