"""The resource registry: named directories, and which one owns a path.

Every path, when registering and when looking up, goes through
``acp_client.paths.real_path`` (the one normaliser, symlinks resolved), so a
prefix comparison is a containment test. A path is attributed to the deepest
root containing it, or to nothing: never a guess.

A directory whose ``.git`` is a *file* (a git worktree or submodule) is a
checkout of its own. Inside an outer resource it does not belong to that
resource: unless it is registered itself, paths in it resolve to NOT_FOUND.
"""

from __future__ import annotations

import os
import posixpath
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath, PureWindowsPath

from acp_backend.eventlog import EventLog
from acp_backend.ids import new_ulid
from acp_backend.store import Store
from acp_client.errors import AlreadyExists, InvalidParams, NotFound
from acp_client.events import ResourceChanged
from acp_client.models import Resource
from acp_client.operations import ResourceResolveResult
from acp_client.paths import is_within, real_path, relative_to

_URI_OR_DRIVE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_BAD_NAME_CHARS = re.compile(r"[/\\\x00-\x1f\x7f]")
MAX_NAME_LENGTH = 128


@dataclass(frozen=True)
class RootEntry:
    """A root a path can resolve into: a resource's own, or one of its sandboxes."""

    root: str
    resource: Resource
    sandbox: bool


def root_entries(resources: Iterable[Resource]) -> list[RootEntry]:
    entries: list[RootEntry] = []
    for resource in resources:
        entries.append(RootEntry(resource.root, resource, sandbox=False))
        entries.extend(RootEntry(root, resource, sandbox=True) for root in resource.sandbox_roots)
    return entries


def has_git_file(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, ".git"))


def nested_checkout(
    path: str, root: str, is_checkout: Callable[[str], bool] = has_git_file
) -> str | None:
    """The first directory strictly below ``root`` on the way to ``path``
    (``path`` included) that is a checkout of its own, if any."""
    current = root
    relative = relative_to(path, root)
    if relative == ".":
        return None
    for part in relative.split("/"):
        current = posixpath.join(current, part)
        if is_checkout(current):
            return current
    return None


def resolve_path(
    path: str,
    entries: Iterable[RootEntry],
    is_checkout: Callable[[str], bool] = has_git_file,
) -> ResourceResolveResult:
    """Attribute a normalised path to the deepest root containing it.

    Pure apart from ``is_checkout``, so it works on paths of any platform.
    """
    containing = [entry for entry in entries if is_within(path, entry.root)]
    if not containing:
        raise NotFound(
            f"{path} is not inside any registered resource",
            remedy="register its folder: acp-backend resource add DIR",
        )
    # All candidates are prefixes of ``path``: the longest is the deepest.
    entry = max(containing, key=lambda candidate: len(candidate.root))
    checkout = nested_checkout(path, entry.root, is_checkout)
    if checkout is not None:
        raise NotFound(
            f"{path} is in {checkout}, a git checkout of its own inside resource "
            f"{entry.resource.name!r}, which is not registered",
            remedy=f"register the worktree: acp-backend resource add {checkout}",
        )
    return ResourceResolveResult(
        resource=entry.resource,
        logical_path=relative_to(path, entry.root),
        sandbox=entry.sandbox,
    )


def normalized_real_path(path: str, field: str = "params.path") -> str:
    """``real_path`` of an absolute path or file URI; InvalidParams otherwise.

    Relative paths are refused: they would be read against the backend's
    working directory, which is not the caller's over HTTP.
    """
    if not path.strip():
        raise InvalidParams(f"{field}: must not be empty")
    absolute = (
        _URI_OR_DRIVE.match(path)
        or PurePosixPath(path).is_absolute()
        or PureWindowsPath(path).is_absolute()
    )
    if not absolute:
        raise InvalidParams(f"{field}: {path!r} is not an absolute path or a file: URI")
    try:
        return real_path(path)
    except ValueError as exc:  # another URI scheme, an embedded NUL byte
        raise InvalidParams(f"{field}: {exc}") from exc


def check_name(name: str) -> str:
    if not name or name != name.strip() or len(name) > MAX_NAME_LENGTH:
        raise InvalidParams(
            f"params.name: {name!r} must be 1-{MAX_NAME_LENGTH} characters "
            "without surrounding spaces"
        )
    if _BAD_NAME_CHARS.search(name):
        raise InvalidParams(f"params.name: {name!r} must not contain slashes or control characters")
    return name


def _existing_directory(path: str) -> str:
    if not os.path.exists(path):
        raise NotFound(f"{path}: no such directory")
    if not os.path.isdir(path):
        raise InvalidParams(f"params.path: {path} is not a directory")
    return path


class Registry:
    """Registered resources, persisted in the store; changes become events.

    Every save's run looks its resource up before its tool can start: the
    resources are read once and kept until the database changes (another
    process's commit moves SQLite's ``data_version``; this registry, the
    only writer of its tables in the process, drops them as it writes)."""

    def __init__(self, store: Store, events: EventLog) -> None:
        self._store = store
        self._events = events
        self._kept: tuple[int, tuple[Resource, ...]] | None = None  # (data_version, resources)

    def resources(self) -> list[Resource]:
        return list(self._current())

    def get(self, ref: str) -> Resource:
        """A resource by id or, failing that, by name."""
        resources = self._current()
        found = next((r for r in resources if r.id == ref), None) or next(
            (r for r in resources if r.name == ref), None
        )
        if found is not None:
            return found
        raise NotFound(
            f"no resource with id or name {ref!r}",
            remedy="list them with: acp-backend resource list",
        )

    def register(self, path: str, name: str | None = None) -> Resource:
        root = _existing_directory(normalized_real_path(path))
        if name is None:
            name = posixpath.basename(root)
            if not name:
                raise InvalidParams(f"params.name: required to register {root}")
        resource = Resource(
            id=new_ulid(), name=check_name(name), root=root, created_at=datetime.now(UTC)
        )
        with self._writing() as conn:
            self._refuse_taken_root(conn, root)
            taken = conn.execute("SELECT root FROM resources WHERE name = ?", (name,)).fetchone()
            if taken is not None:
                raise AlreadyExists(
                    f"a resource named {name!r} already exists ({taken['root']})",
                    remedy="choose another name: acp-backend resource add PATH --name NAME",
                )
            conn.execute(
                "INSERT INTO resources (id, name, root, created_at) VALUES (?, ?, ?, ?)",
                (resource.id, resource.name, resource.root, resource.created_at.isoformat()),
            )
        self._events.publish(ResourceChanged, change="registered", resource=resource)
        return resource

    def unregister(self, ref: str) -> Resource:
        resource = self.get(ref)
        with self._writing() as conn:
            conn.execute("DELETE FROM resources WHERE id = ?", (resource.id,))
        self._events.publish(ResourceChanged, change="unregistered", resource=resource)
        return resource

    def resolve(self, path: str) -> ResourceResolveResult:
        return resolve_path(normalized_real_path(path), root_entries(self.resources()))

    def add_sandbox_root(self, resource_id: str, path: str) -> Resource:
        """Make ``path`` (a plan's work tree) resolve to ``resource_id``."""
        resource = self.get(resource_id)
        root = _existing_directory(normalized_real_path(path))
        with self._writing() as conn:
            self._refuse_taken_root(conn, root)
            conn.execute(
                "INSERT INTO sandbox_roots (root, resource_id, created_at) VALUES (?, ?, ?)",
                (root, resource.id, datetime.now(UTC).isoformat()),
            )
        return self._changed(resource.id)

    def remove_sandbox_root(self, resource_id: str, path: str) -> Resource:
        resource = self.get(resource_id)
        root = normalized_real_path(path)
        with self._writing() as conn:
            deleted = conn.execute(
                "DELETE FROM sandbox_roots WHERE root = ? AND resource_id = ?", (root, resource.id)
            ).rowcount
        if not deleted:
            raise NotFound(f"{root} is not a sandbox of resource {resource.name!r}")
        return self._changed(resource.id)

    def _current(self) -> tuple[Resource, ...]:
        version = self._store.data_version()
        if self._kept is None or self._kept[0] != version:
            self._kept = (version, self._load())
        return self._kept[1]

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """A write to the registry's tables: what is kept is read again after it."""
        try:
            with self._store.write() as conn:
                yield conn
        finally:
            self._kept = None

    def _load(self) -> tuple[Resource, ...]:
        rows = self._store.query("SELECT * FROM resources ORDER BY name, id")
        sandboxes: dict[str, list[str]] = {row["id"]: [] for row in rows}
        for row in self._store.query("SELECT resource_id, root FROM sandbox_roots ORDER BY root"):
            sandboxes.get(row["resource_id"], []).append(row["root"])
        return tuple(_resource(row, sandboxes[row["id"]]) for row in rows)

    def _changed(self, resource_id: str) -> Resource:
        resource = self.get(resource_id)
        self._events.publish(ResourceChanged, change="updated", resource=resource)
        return resource

    @staticmethod
    def _refuse_taken_root(conn: sqlite3.Connection, root: str) -> None:
        owner = conn.execute(
            "SELECT name, 0 AS sandbox FROM resources WHERE root = ? UNION ALL "
            "SELECT r.name, 1 FROM sandbox_roots AS s JOIN resources AS r ON r.id = s.resource_id"
            " WHERE s.root = ?",
            (root, root),
        ).fetchone()
        if owner is not None:
            what = "a sandbox of resource" if owner["sandbox"] else "already registered as"
            raise AlreadyExists(f"{root} is {what} {owner['name']!r}")


def _resource(row: sqlite3.Row, sandbox_roots: Iterable[str]) -> Resource:
    return Resource(
        id=row["id"],
        name=row["name"],
        root=row["root"],
        sandbox_roots=tuple(sandbox_roots),
        created_at=datetime.fromisoformat(row["created_at"]),
    )
