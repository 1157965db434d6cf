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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from acp_client.errors import Forbidden, NotFound
from acp_client.paths import NotAFilePath, is_within, path_to_uri, real_path, relative_to

if TYPE_CHECKING:  # the session builds Roots before the client loads (ADR 0016)
    from acp_client.client import AcpClient
    from acp_client.models import Resource

log = logging.getLogger(__name__)

FileKey = tuple[str, str]
"""(scope, POSIX path relative to the scope's root). The scope is the
resource id for the resource's own files, and ``sandbox_scope(...)`` for a
copy in one of its sandboxes: a file and its sandbox copy are two files,
each with its own diagnostics (the sandbox's come from its plan's results)."""


def sandbox_scope(resource_id: str, sandbox_root: str) -> str:
    return f"{resource_id}@{sandbox_root}"


def resource_of(scope: str) -> str:
    """The resource id of a scope (its own or one of its sandboxes')."""
    return scope.partition("@")[0]


def inside(relative: str) -> bool:
    """A relative POSIX path that stays under its root (no ``..`` escape)."""
    if relative.startswith("/"):
        return False
    if "/." not in f"/{relative}":  # no "." or ".." segment: nothing to climb with
        return True  # (the usual path, checked per file of every result: no normpath)
    normal = posixpath.normpath(relative)
    return normal != ".." and not normal.startswith("../")


def all_inside(paths: Sequence[str]) -> bool:
    """``inside`` for every one of ``paths``, in one look for the usual case:
    none absolute and none with a ``.`` segment. Any path that could climb
    out (or a newline in one that misleads the look) gets ``inside``."""
    joined = "\n/" + "\n/".join(paths)
    if "\n//" not in joined and "/." not in joined:
        return True
    return all(map(inside, paths))


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
        self._editor_uris: dict[FileKey, str] = {}  # the URI the editor last used per file
        self._folders: list[tuple[str, str]] = []  # (real path, URI as the editor sent it)
        self._respell_watchers: list[Callable[[FileKey | str | None], None]] = []

    async def place(self, client: AcpClient, uri: str) -> Placement | None:
        """Where ``uri`` belongs, or None (other scheme, unregistered, forbidden).

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
        except Forbidden as exc:  # the backend will not say: as if unregistered
            log.warning("the ACP backend refuses to place %s: %s", path, exc)
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
            self.remember(placement.resource)
        self._placements[path] = placement
        return placement

    def known(self, uri: str) -> Placement | None:
        """Where ``uri`` was placed, if it was (no backend call)."""
        path = file_path(uri)
        return None if path is None else self._placements.get(path)

    def remember(self, resource: Resource) -> None:
        before = self.resources.get(resource.id)
        if before is not None and before.root != resource.root:
            self._respell(resource.id)
        self.resources[resource.id] = resource

    def forget(self, resource_id: str) -> None:
        if resource_id in self.resources:
            self._respell(resource_id)
            del self.resources[resource_id]
        self.invalidate()

    def on_respell(self, pin: Callable[[FileKey | str | None], None]) -> None:
        """Call ``pin`` before ``uri_of`` may answer differently for a file
        (its key), for the files of a resource (its id), or for any (None):
        what was sent under the old URI must be emptied under it."""
        self._respell_watchers.append(pin)

    def _respell(self, which: FileKey | str | None) -> None:
        for pin in self._respell_watchers:
            pin(which)

    def invalidate(self) -> None:
        """The registry changed: every cached answer may be wrong now."""
        self._placements.clear()

    def path_of(self, key: FileKey) -> str | None:
        """The file's path on this machine; None outside a known root."""
        resource_id, _, sandbox_root = key[0].partition("@")
        resource = self.resources.get(resource_id)
        if resource is None or not inside(key[1]):
            return None
        root = sandbox_root or resource.root
        return root if key[1] == "." else posixpath.join(root, key[1])

    def set_folders(self, uris: list[str]) -> None:
        """The workspace folders as the editor names them, deepest first."""
        pairs = [(file_path(uri), uri) for uri in uris]
        known = [(path, uri) for path, uri in pairs if path is not None]
        folders = sorted(known, key=lambda pair: len(pair[0]), reverse=True)
        if folders != self._folders:
            self._respell(None)
        self._folders = folders

    def note_uri(self, key: FileKey, uri: str) -> None:
        """The editor opened this file under ``uri``: use that spelling from now on."""
        if self.uri_of(key) != uri:
            self._respell(key)
        self._editor_uris[key] = uri

    def uri_of(self, key: FileKey) -> str | None:
        """The URI to publish a file under, spelled the way the editor spells
        it (editors match diagnostics to files by URI string): the URI it
        opened the file under, else the file's path under the workspace
        folder that holds it (which may be a symlink to the real root), else
        the real path's URI."""
        noted = self._editor_uris.get(key)
        if noted is not None:
            return noted
        path = self.path_of(key)
        if path is None:
            return None
        for folder_path, folder_uri in self._folders:
            if is_within(path, folder_path) and path != folder_path:
                relative = quote(relative_to(path, folder_path), safe="/")
                return f"{folder_uri.rstrip('/')}/{relative}"
        return path_to_uri(path)
