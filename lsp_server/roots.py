"""Which resource a document or workspace folder belongs to.

Every answer comes from the backend's registry (``resource.resolve``); this
module only caches it and refuses to believe an answer that does not hold:
a document is never attributed to a resource whose root (or sandbox root)
does not contain it. With nested roots the backend picks the deepest; we
check containment, never guess. Non-``file:`` URIs have no place at all.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import dataclass

from acp_client.client import AcpClient
from acp_client.errors import NotFound
from acp_client.models import Resource
from acp_client.paths import NotAFilePath, is_within, path_to_uri, real_path

log = logging.getLogger(__name__)

FileKey = tuple[str, str]
"""(scope, POSIX path relative to the scope's root). The scope is the
resource id for the resource's own files, and ``sandbox_scope(...)`` for a
copy in one of its sandboxes: a file and its sandbox copy are two files,
each with its own diagnostics (the sandbox's come from its plan's results)."""


def sandbox_scope(resource_id: str, sandbox_root: str) -> str:
    return f"{resource_id}@{sandbox_root}"


def inside(relative: str) -> bool:
    """A relative POSIX path that stays under its root (no ``..`` escape)."""
    normal = posixpath.normpath(relative)
    return not relative.startswith("/") and normal != ".." and not normal.startswith("../")


@dataclass(frozen=True, slots=True)
class Placement:
    """A document's place in the registry."""

    resource: Resource
    logical_path: str
    sandbox: bool
    sandbox_root: str | None = None  # the sandbox it lies in (sandbox True)

    @property
    def key(self) -> FileKey:
        if self.sandbox_root is not None:
            return (sandbox_scope(self.resource.id, self.sandbox_root), self.logical_path)
        return (self.resource.id, self.logical_path)


def file_path(uri: str) -> str | None:
    """The real path behind a ``file:`` URI; None for any other scheme."""
    try:
        return real_path(uri)
    except NotAFilePath:
        return None


def contains(resource: Resource, path: str) -> bool:
    roots = (resource.root, *resource.sandbox_roots)
    return any(is_within(path, root) for root in roots)


def _sandbox_of(resource: Resource, path: str) -> str | None:
    """The deepest sandbox root of ``resource`` holding ``path``."""
    holding = [root for root in resource.sandbox_roots if is_within(path, root)]
    return max(holding, key=len) if holding else None


class Roots:
    """Placements of documents and folders, cached until the registry changes."""

    def __init__(self) -> None:
        self.resources: dict[str, Resource] = {}
        self._placements: dict[str, Placement | None] = {}

    async def place(self, client: AcpClient, uri: str) -> Placement | None:
        """Where ``uri`` belongs, or None (other scheme, unregistered, refused).

        Backend outages (``TransportError``) propagate and are not cached.
        """
        path = file_path(uri)
        if path is None:
            return None
        if path in self._placements:
            return self._placements[path]
        try:
            answer = await client.resource_resolve(path)
        except NotFound:
            placement = None
        else:
            sandbox_root = _sandbox_of(answer.resource, path) if answer.sandbox else None
            placement = Placement(
                answer.resource, answer.logical_path, answer.sandbox, sandbox_root
            )
            if (
                not contains(answer.resource, path)
                or not inside(answer.logical_path)
                or (answer.sandbox and sandbox_root is None)
            ):
                log.warning(
                    "refusing %s -> resource %s (%s): not under its roots",
                    path,
                    answer.resource.name,
                    answer.logical_path,
                )
                placement = None
        if placement is not None:
            self.resources[placement.resource.id] = placement.resource
        self._placements[path] = placement
        return placement

    def remember(self, resource: Resource) -> None:
        self.resources[resource.id] = resource

    def forget(self, resource_id: str) -> None:
        self.resources.pop(resource_id, None)
        self.invalidate()

    def invalidate(self) -> None:
        """The registry changed: every cached answer may be wrong now."""
        self._placements.clear()

    def path_of(self, key: FileKey) -> str | None:
        resource_id, _, sandbox_root = key[0].partition("@")
        resource = self.resources.get(resource_id)
        if resource is None:
            return None
        root = sandbox_root or resource.root
        return root if key[1] == "." else posixpath.join(root, key[1])

    def uri_of(self, key: FileKey) -> str | None:
        path = self.path_of(key)
        return None if path is None else path_to_uri(path)
