"""What the validations show: the session's mirror of the backend's results.

The one store diagnostics (push and pull), code actions and hover read.

A file is a scope (resource id) and a path relative to its root; a new
result for a validation replaces only that validation's marks, in every
file it had touched, so several validations on one file merge. Every
change bumps the file's version, which the pull path hands out as result id.
Beside the validations' marks, each resource has at most one error of its
``acp.toml``, kept apart so that no validation name can stand for it.

What a validation shows is held per validation, not per file: its result
and, for each file, the indexes of the result's findings shown there (the
``placed`` map, kept as it was computed). Taking in a 10,000-finding result
is one cheap pass on the event loop, a file's diagnostics are written from
those indexes when that file is sent (``held``; no ``Mark`` each, ADR
0015), and a file costs the store one entry in that map and one in its
scope's versions: an entry of its own in each validation (two tuples, a
key, a ``range``, a set member) and a version int of its own were ~40 bytes
of heap a finding held, ~8 now (issue 11 allows 300 in all, ADR 0019). A
partial result (a save's run of a ``{files}`` validation, ADR
0017) replaces the marks of the files its run covered only; the other files
keep theirs, on the earlier result they came from, and are not sent again.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from itertools import repeat

from acp_client.models import Finding, ResultOutcome, ValidationResult
from lsp_server.marks import (
    ConfigMark,
    Held,
    Mark,
    Placed,
    anchor_of,
    config_mark,
    indexes,
    mark_at,
    placed,
)
from lsp_server.roots import FileKey


@dataclass(slots=True)
class _Shown:
    """One validation in one scope: its latest result, when that came in,
    and what it shows, as layers, newest first, of a result and where its
    findings go. A full result is one layer; a partial one goes on top and
    takes the files its run covered from the layers below, which keep their
    other files. A path is in at most one layer; a layer left without files
    goes."""

    latest: ValidationResult
    applied: int
    layers: list[tuple[ValidationResult, Placed]]

    def paths(self) -> set[str]:
        return {path for _, where in self.layers for path in where}


class ResultStore:
    def __init__(self) -> None:
        # By scope, then by validation; a file's validations are found by
        # looking its path up in each (a scope has few validations).
        self._shown: dict[str, dict[str, _Shown]] = {}
        # Every layer of a scope, in one list, for ``held`` (a file is looked
        # up in each; the nested loop cost more than the lookups): rebuilt
        # after a change of the scope's layers.
        self._layers: dict[str, list[tuple[ValidationResult, Placed]]] = {}
        self._config_errors: dict[str, ConfigMark] = {}  # by resource id
        # By scope, then by path (the findings' own string: no key tuple a file).
        self._versions: dict[str, dict[str, int]] = {}
        self._clock = 0

    def apply(self, result: ValidationResult, scope: str | None = None) -> set[FileKey]:
        """Take in a result; return the files whose diagnostics changed.

        ``scope``: where its files are (``roots.FileKey``): the resource's
        own for a result of the resource, the plan's sandbox for a plan's;
        a result offered to the other kind of scope is ignored (a plan's
        findings describe its sandbox, not the files the editor shows).
        Ignored too: cancelled runs (the earlier state still stands), and
        results of a run older than the one already shown (a superseded run
        finishing late).
        """
        scope = scope or result.resource_id
        if (result.plan_id is None) != (scope == result.resource_id):
            return set()
        if result.outcome is ResultOutcome.CANCELLED:
            return set()
        validations = self._shown.setdefault(scope, {})
        shown = validations.get(result.validation)
        if shown is not None and result.started_at < shown.latest.started_at:
            return set()
        touched = shown.paths() if shown is not None else None
        grouped = placed(result)
        self._clock += 1
        validations[result.validation] = _Shown(
            result, self._clock, [(result, grouped)] if grouped else []
        )
        self._layers.pop(scope, None)
        return self._bump(scope, grouped.keys() if touched is None else touched | grouped.keys())

    def apply_partial(
        self,
        result: ValidationResult,
        covered: Collection[str],
        base_id: str,
        scope: str | None = None,
    ) -> set[FileKey] | None:
        """Take in a partial result: its findings are those of the ``covered``
        files (and any without a file); every other file keeps what result
        ``base_id`` showed there. Return the files whose diagnostics changed,
        or None when the result shown is not ``base_id`` (an event was missed,
        or the validation changed mode): list the results to catch up.
        """
        scope = scope or result.resource_id
        shown = self._shown.get(scope, {}).get(result.validation)
        if shown is not None and result.started_at < shown.latest.started_at:
            return set()  # a superseded run finishing late
        if shown is None or shown.latest.id != base_id or shown.latest.mode != result.mode:
            return None
        anchor = anchor_of(result).path  # where findings without a file show
        grouped = placed(result)
        taken = {*covered, anchor, *grouped}  # a file it reports beyond its run's too
        dropped: set[str] = set()
        layers = []
        for earlier, where in shown.layers:
            for path in taken & where.keys():
                del where[path]
                dropped.add(path)
            if where:
                layers.append((earlier, where))
        if not result.findings and layers:
            grouped.pop(anchor, None)  # it still fails on the other files: no "passed" note
        self._clock += 1
        shown.latest, shown.applied = result, self._clock
        shown.layers = [(result, grouped), *layers] if grouped else layers
        self._layers.pop(scope, None)
        return self._bump(scope, dropped | grouped.keys())

    def now(self) -> int:
        """A point in the store's history, to pass to ``replace`` later."""
        return self._clock

    def replace(
        self, scope: str, results: Iterable[ValidationResult], since: int | None = None
    ) -> set[FileKey]:
        """A scope's full listing (a resource's, or a plan's in its
        sandbox), taken after ``since``: apply it, and drop the validations
        it no longer has, unless a result for one came in (from an event)
        after ``since`` — the listing could not know it. A resync after an
        outage converges to the backend this way."""
        changed: set[FileKey] = set()
        listed: set[str] = set()
        for result in results:
            listed.add(result.validation)
            changed |= self.apply(result, scope)
        horizon = self._clock if since is None else since
        validations = self._shown.get(scope, {})
        gone: set[str] = set()
        for validation in [v for v in validations if v not in listed]:
            if validations[validation].applied <= horizon:
                gone |= validations.pop(validation).paths()
        if not validations:
            self._shown.pop(scope, None)
        self._layers.pop(scope, None)
        return changed | self._bump(scope, gone)

    def set_config_error(self, resource_id: str, error: Finding | None) -> set[FileKey]:
        """The resource's ``acp.toml`` error as the backend reports it now
        (None: the file is fine); return the files whose diagnostics changed."""
        before = self._config_errors.pop(resource_id, None)
        after = None if error is None else config_mark(error)
        if after is not None:
            self._config_errors[resource_id] = after
        if after == before:
            return set()
        return self._bump(resource_id, {mark.location.path for mark in (before, after) if mark})

    def config_error(self, key: FileKey) -> ConfigMark | None:
        """The resource's ``acp.toml`` error, if it is shown on this file."""
        mark = self._config_errors.get(key[0])
        return mark if mark is not None and mark.location.path == key[1] else None

    def clear_file(self, key: FileKey) -> bool:
        """Forget every mark on one file (``clearOnEdit``); True if any was shown."""
        scope, path = key
        had_marks = False
        for shown in self._shown.get(scope, {}).values():
            for n, (_, where) in enumerate(shown.layers):
                if where.pop(path, None) is not None:
                    had_marks = True
                    if not where:
                        del shown.layers[n]
                        self._layers.pop(scope, None)
                    break  # a path is in one layer at most
        had_config_error = self.config_error(key) is not None
        if had_config_error:
            del self._config_errors[scope]
        if not had_marks and not had_config_error:
            return False
        self._bump(scope, {path})
        return True

    def forget_resource(self, resource_id: str) -> set[FileKey]:
        """Drop a resource's results and ``acp.toml`` error (unregistered)."""
        return self.replace(resource_id, ()) | self.set_config_error(resource_id, None)

    def resource_ids(self) -> set[str]:
        """Resources with results or an ``acp.toml`` error held."""
        return set(self._shown) | set(self._config_errors)

    def held(self, key: FileKey) -> list[Held]:
        """The file's results, each with what ``placed`` holds of its
        findings shown there: what ``mapping.file_diagnostics`` converts
        without a ``Mark`` each."""
        scope, path = key
        layers = self._layers.get(scope)
        if layers is None:
            validations = self._shown.get(scope, {}).values()
            layers = self._layers[scope] = [
                layer for shown in validations for layer in shown.layers
            ]
        return [(result, held) for result, where in layers if (held := where.get(path)) is not None]

    def marks(self, key: FileKey) -> list[Mark]:
        """The file's marks, whole (for readers that want them; sending uses ``held``)."""
        return [
            mark_at(result, index) for result, shown in self.held(key) for index in indexes(shown)
        ]

    def latest_in(self, scope: str) -> tuple[ValidationResult, ...]:
        """The latest result of each validation shown in a scope."""
        return tuple(shown.latest for shown in self._shown.get(scope, {}).values())

    def version(self, key: FileKey) -> int:
        return self._versions.get(key[0], {}).get(key[1], 0)

    def files(self) -> list[FileKey]:
        """Every file that has had marks, emptied ones included."""
        return [(scope, path) for scope, paths in self._versions.items() for path in paths]

    def _bump(self, scope: str, paths: Collection[str]) -> set[FileKey]:
        """A new version for each of ``paths``, one for all (one int object
        held, not one a file); return their keys."""
        self._clock += 1
        self._versions.setdefault(scope, {}).update(dict.fromkeys(paths, self._clock))
        return set(zip(repeat(scope), paths))
