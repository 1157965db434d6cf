"""Contract objects for tests: findings and validation results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

from acp_backend.ids import new_ulid
from acp_client.models import Finding, Location, Resource, ValidationMode, ValidationResult

T0 = datetime(2026, 1, 1, tzinfo=UTC)
_runs = count(1)


def finding(
    path: str, line: int = 0, character: int = 0, message: str = "m", **more: Any
) -> Finding:
    """A finding at ``path`` (0-based line and character); ``code`` goes to the
    finding, anything else (``end_line``, ``end_character``) to its location."""
    code = more.pop("code", None)
    return Finding(
        location=Location(path=path, line=line, character=character, **more),
        message=message,
        code=code,
    )


def result(
    validation: str = "lint",
    mode: ValidationMode = ValidationMode.REQUIRED,
    passed: bool = False,
    findings: Sequence[Finding] = (),
    *,
    resource: Resource | str = "R",
    at: float | None = None,
    **more: Any,
) -> ValidationResult:
    """A result of ``validation`` for ``resource`` (a registered one, or an id),
    with a fresh ULID; ``more`` sets any other field (``message``, ``plan_id``...).

    Given ``at``, it starts ``at`` seconds after ``T0`` and lasts a second: a
    fixed clock unit tests order results by. Without it, a result for an id
    starts at ``T0``, and one for a registered resource is dated now, as the
    backend dates the real results it is compared with."""
    if at is None and isinstance(resource, Resource):
        started = finished = datetime.now(UTC)
    else:
        started = T0 + timedelta(seconds=at or 0)
        finished = started + timedelta(seconds=1)
    return ValidationResult(
        id=new_ulid(),
        validation=validation,
        mode=mode,
        passed=passed,
        resource_id=resource.id if isinstance(resource, Resource) else resource,
        run_id=f"run-{next(_runs)}",
        started_at=started,
        finished_at=finished,
        findings=tuple(findings),
        **more,
    )
