"""What was last sent for each file, and under which URI, in little heap.

Editors key diagnostics by URI string, so a file shown under one URI and
then another (an open document's own spelling, a workspace folder added
over a symlink) must be emptied under the first. A URI string, a key tuple
and an object for every file sent were ~24 bytes of heap a finding held
(issue 11 allows 300 in all, ADR 0019). So files are held by scope, then
path (the findings' own strings), and with a URI only when they were sent
under another than the one ``Roots.uri_of`` spells; ``Roots`` tells before
it would spell a file differently (``Roots.on_respell``), and the files it
may respell keep the URI they were sent under from then on.
"""

from __future__ import annotations

from typing import Generic, NamedTuple, TypeVar

from lsp_server.roots import FileKey, Roots, resource_of

V = TypeVar("V")


class _Pinned(NamedTuple, Generic[V]):
    uri: str  # sent under this URI, not the one ``Roots`` spells (now)
    value: V


_ABSENT = object()


class LastSent(Generic[V]):
    """Per file: the URI it was last sent under and a value of the caller's."""

    def __init__(self, roots: Roots) -> None:
        self._roots = roots
        self._files: dict[str, dict[str, V | _Pinned[V]]] = {}
        roots.on_respell(self._pin)

    def get(self, key: FileKey, spelt: str | None) -> tuple[str, V] | None:
        """The URI the file was last sent under and the value sent with it;
        ``spelt`` is ``roots.uri_of(key)`` (the caller has it at hand)."""
        held = self._files.get(key[0], {}).get(key[1], _ABSENT)
        if held is _ABSENT:
            return None
        if isinstance(held, _Pinned):
            return held.uri, held.value
        assert spelt is not None  # pinned before Roots stops spelling it
        return spelt, held  # type: ignore[return-value]  # V, not the sentinel

    def put(self, key: FileKey, uri: str, value: V, spelt: str | None) -> None:
        """The file was sent under ``uri`` now (``spelt`` as for ``get``)."""
        files = self._files.setdefault(key[0], {})
        files[key[1]] = value if uri == spelt else _Pinned(uri, value)

    def _pin(self, which: FileKey | str | None) -> None:
        """``Roots`` is about to spell differently the file ``which``, the
        files of resource ``which``, or (None) any file: hold the URI they
        were sent under."""
        for scope, files in list(self._files.items()):
            if isinstance(which, tuple):
                if scope != which[0]:
                    continue
                paths = [which[1]] if which[1] in files else []
            elif which is None or resource_of(scope) == which:
                paths = list(files)
            else:
                continue
            for path in paths:
                held = files[path]
                if not isinstance(held, _Pinned):
                    uri = self._roots.uri_of((scope, path))
                    if uri is not None:
                        files[path] = _Pinned(uri, held)
