"""The one diagnostics store both push and pull serve from.

Keyed by file (resource id, path relative to its root), then by validation:
a new result for a validation replaces only that validation's marks, in
every file it had touched, so several validations on one file merge. Every
change bumps the file's version, which the pull path hands out as result id.
Beside the validations' marks, each resource has at most one error of its
``acp.toml``, kept apart so that no validation name can stand for it.

A file holds the indexes of its findings in the validation's result they
came from, not marks: taking in a 10,000-finding result is one cheap pass on
the event loop, and a file's diagnostics are written from those indexes
when that file is sent (``held``; no ``Mark`` each, ADR 0015). A partial
result (a save's run of a ``{files}`` validation, ADR 0017) replaces the
marks of the files its run covered only; the other files keep theirs, on
the earlier result they came from, and are not sent again.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from acp_client.models import Finding, ResultOutcome, ValidationResult
from lsp_server.marks import ConfigMark, Mark, Placed, anchor_of, config_mark, mark_at, placed
from lsp_server.roots import FileKey

Held = tuple[ValidationResult, Sequence[int | None]]  # a result, the indexes of its findings shown
_Entry = tuple[str, ValidationResult, Sequence[int | None]]  # the validation's, in one file


class DiagnosticsStore:
    def __init__(self) -> None:
        # A file's entries, one a validation: a tuple, not a dict by validation
        # (~13 bytes of heap a finding held less; a file has few validations).
        self._marks: dict[FileKey, tuple[_Entry, ...]] = {}
        self._latest: dict[tuple[str, str], ValidationResult] = {}
        self._applied: dict[tuple[str, str], int] = {}  # when each slot's result came in
        self._files_of: dict[tuple[str, str], set[FileKey]] = {}
        self._config_errors: dict[str, ConfigMark] = {}  # by resource id
        self._plan_scopes: dict[str, str] = {}  # plan id -> its sandbox's scope
        self._versions: dict[FileKey, int] = {}
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
        if result.plan_id is not None:
            self._plan_scopes[result.plan_id] = scope
        slot = (scope, result.validation)
        shown = self._latest.get(slot)
        if shown is not None and result.started_at < shown.started_at:
            return set()
        self._latest[slot] = result
        self._clock += 1
        self._applied[slot] = self._clock
        touched = self._files_of.pop(slot, set())
        for key in touched:
            self._drop(key, result.validation)
        added = self._hold(scope, result, placed(result))
        if added:
            self._files_of[slot] = added
        changed = touched | added
        self._bump(changed)
        return changed

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
        slot = (scope, result.validation)
        shown = self._latest.get(slot)
        if shown is not None and result.started_at < shown.started_at:
            return set()  # a superseded run finishing late
        if shown is None or shown.id != base_id or shown.mode != result.mode:
            return None
        self._latest[slot] = result
        self._clock += 1
        self._applied[slot] = self._clock
        anchor = anchor_of(result).path  # where findings without a file show
        replaced = {(scope, path) for path in (*covered, anchor)}
        files = self._files_of.pop(slot, set())
        dropped = replaced & files
        for key in dropped:
            self._drop(key, result.validation)
        files -= dropped
        grouped = placed(result)
        if not result.findings and files:
            grouped.pop(anchor, None)  # it still fails on the other files: no "passed" note
        added = self._hold(scope, result, grouped)
        if files | added:
            self._files_of[slot] = files | added
        changed = dropped | added
        self._bump(changed)
        return changed

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
        for slot in [s for s in self._latest if s[0] == scope and s[1] not in listed]:
            if self._applied[slot] > horizon:
                continue
            del self._latest[slot], self._applied[slot]
            for key in self._files_of.pop(slot, set()):
                self._drop(key, slot[1])
                changed.add(key)
        self._bump(changed)
        return changed

    def set_config_error(self, resource_id: str, error: Finding | None) -> set[FileKey]:
        """The resource's ``acp.toml`` error as the backend reports it now
        (None: the file is fine); return the files whose diagnostics changed."""
        before = self._config_errors.pop(resource_id, None)
        after = None if error is None else config_mark(error)
        if after is not None:
            self._config_errors[resource_id] = after
        if after == before:
            return set()
        changed = {(resource_id, mark.location.path) for mark in (before, after) if mark}
        self._bump(changed)
        return changed

    def config_error(self, key: FileKey) -> ConfigMark | None:
        """The resource's ``acp.toml`` error, if it is shown on this file."""
        mark = self._config_errors.get(key[0])
        return mark if mark is not None and mark.location.path == key[1] else None

    def clear_file(self, key: FileKey) -> bool:
        """Forget every mark on one file (``clearOnEdit``); True if any was shown."""
        entries = self._marks.pop(key, ())
        for validation, _, _ in entries:
            files = self._files_of.get((key[0], validation))
            if files is not None:
                files.discard(key)
        had_config_error = self.config_error(key) is not None
        if had_config_error:
            del self._config_errors[key[0]]
        if not entries and not had_config_error:
            return False
        self._bump({key})
        return True

    def forget_resource(self, resource_id: str) -> set[FileKey]:
        """Drop a resource's results and ``acp.toml`` error (unregistered)."""
        return self.replace(resource_id, ()) | self.set_config_error(resource_id, None)

    def resource_ids(self) -> set[str]:
        """Resources with results or an ``acp.toml`` error held."""
        return {slot[0] for slot in self._latest} | set(self._config_errors)

    def held(self, key: FileKey) -> list[Held]:
        """The file's results, each with the indexes of its findings shown
        there: what ``mapping.diagnostics`` converts without a ``Mark`` each."""
        return [(result, indexes) for _, result, indexes in self._marks.get(key, ())]

    def marks(self, key: FileKey) -> list[Mark]:
        """The file's marks, whole (for readers that want them; sending uses ``held``)."""
        return [mark_at(result, index) for result, indexes in self.held(key) for index in indexes]

    def latest(
        self,
        resource_id: str,
        validation: str,
        plan_id: str | None = None,
        result_id: str | None = None,
    ) -> ValidationResult | None:
        """The latest result of a validation of a resource, or of one of its
        plans; with ``result_id``, that result if some file still shows its
        findings (what a diagnostic's ``data`` leads back to), else None."""
        scope = resource_id if plan_id is None else self._plan_scopes.get(plan_id)
        if scope is None:
            return None
        latest = self._latest.get((scope, validation))
        if result_id is None or (latest is not None and latest.id == result_id):
            return latest
        for key in self._files_of.get((scope, validation), ()):
            for entry in self._marks.get(key, ()):
                if entry[0] == validation and entry[1].id == result_id:
                    return entry[1]
        return None

    def version(self, key: FileKey) -> int:
        return self._versions.get(key, 0)

    def files(self) -> list[FileKey]:
        """Every file that has had marks, emptied ones included."""
        return list(self._versions)

    def _hold(self, scope: str, result: ValidationResult, grouped: Placed) -> set[FileKey]:
        """Hold the result's findings in each file it places them in; return
        those files. One key tuple a file for every map that holds the file
        (a second copy was ~6 bytes a finding held)."""
        added: set[FileKey] = set()
        validation = result.validation
        for path, indexes in grouped.items():
            key = (scope, path)
            kept = [entry for entry in self._marks.get(key, ()) if entry[0] != validation]
            self._marks[key] = (*kept, (validation, result, indexes))
            added.add(key)
        return added

    def _drop(self, key: FileKey, validation: str) -> None:
        entries = self._marks.get(key)
        if entries is None:
            return
        kept = tuple(entry for entry in entries if entry[0] != validation)
        if kept:
            self._marks[key] = kept
        else:
            del self._marks[key]

    def _bump(self, keys: Iterable[FileKey]) -> None:
        for key in keys:
            self._clock += 1
            self._versions[key] = self._clock
