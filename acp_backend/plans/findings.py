"""Plans from the fixes tools attached to findings (SARIF ``fixes``, ruff's).

Each referenced fix is checked against the file as it is now (the result
recorded its sha256: a finding computed on other content is a CONFLICT),
and fixes are merged file by file; one that overlaps a fix already taken is
skipped, and the skip is recorded as a decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from acp_backend.plans.changes import read_bytes, sha256
from acp_backend.store import Store
from acp_client.errors import Conflict, InvalidParams, NotFound
from acp_client.models import (
    ChangeKind,
    Decision,
    FileEdit,
    FindingRef,
    Resource,
    TextEdit,
    ValidationResult,
)
from acp_client.text import TakenEdits


@dataclass
class FixSet:
    title: str
    files: list[FileEdit]
    decisions: list[Decision] = field(default_factory=list)
    validation: str | None = None


def _result(store: Store, resource: Resource, result_id: str) -> ValidationResult:
    rows = store.query(
        "SELECT body FROM validation_results WHERE id = ? AND resource_id = ? AND plan_id IS NULL",
        (result_id, resource.id),
    )
    if not rows:
        raise NotFound(f"no result {result_id!r} of resource {resource.name!r}")
    return ValidationResult.model_validate_json(rows[0]["body"])


def collect_fixes(store: Store, resource: Resource, refs: Sequence[FindingRef]) -> FixSet:
    taken: list[TextEdit] = []
    taken_spans = TakenEdits()
    titles: list[str] = []
    decisions: list[Decision] = []
    validations: set[str] = set()
    checked: set[str] = set()
    for ref in refs:
        result = _result(store, resource, ref.result_id)
        if ref.finding >= len(result.findings):
            raise InvalidParams(f"params.findings: result {result.id} has no finding {ref.finding}")
        finding = result.findings[ref.finding]
        if ref.fix >= len(finding.fixes):
            raise InvalidParams(
                f"params.findings: finding {ref.finding} of {result.id} has no fix {ref.fix}"
            )
        fix = finding.fixes[ref.fix]
        for path in sorted({edit.location.path for edit in fix.edits} - checked):
            _check_fresh(resource.root, path, result)
            checked.add(path)
        label = fix.description or finding.message
        if taken_spans.overlaps(fix.edits):
            decisions.append(
                Decision(
                    question=f"Apply {result.validation}'s fix: {label}?",
                    chosen="skipped",
                    alternatives=("apply it",),
                    rationale="it overlaps a fix already in this plan; run the fix again after",
                )
            )
            continue
        taken += fix.edits
        taken_spans.take(fix.edits)
        titles.append(label)
        validations.add(result.validation)
    if not taken:
        raise InvalidParams("params.findings: the fixes referenced change nothing")
    by_path: dict[str, list[TextEdit]] = {}
    for edit in taken:
        by_path.setdefault(edit.location.path, []).append(edit)
    files = [
        FileEdit(path=path, kind=ChangeKind.MODIFY, edits=tuple(edits))
        for path, edits in sorted(by_path.items())
    ]
    title = titles[0] if len(titles) == 1 else f"Apply {len(titles)} fixes"
    validation = validations.pop() if len(validations) == 1 else None
    return FixSet(title, files, decisions, validation)


def _check_fresh(root: str, path: str, result: ValidationResult) -> None:
    recorded = result.file_hashes.get(path)
    if recorded is None:
        return  # the tool's fix names a file no finding located: nothing to compare
    data = read_bytes(root, path)
    if data is None or sha256(data) != recorded:
        raise Conflict(
            f"{path} changed since {result.validation} reported this finding",
            remedy=f"run {result.validation} again and use the new finding's fix",
            data={"paths": [path]},
        )
