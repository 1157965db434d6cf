"""Results as the backend stores them, for benchmarks that seed a store."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from acp_backend.ids import new_ulid
from acp_client.models import Finding, ValidationMode, ValidationResult


def failed_result(
    validation: str,
    resource_id: str,
    findings: Iterable[Finding],
    file_hashes: Mapping[str, str] | None = None,
) -> ValidationResult:
    """A failed required result of ``validation``, finished now."""
    now = datetime.now(UTC)
    return ValidationResult(
        id=new_ulid(),
        validation=validation,
        mode=ValidationMode.REQUIRED,
        passed=False,
        resource_id=resource_id,
        run_id=new_ulid(),
        started_at=now,
        finished_at=now,
        findings=tuple(findings),
        file_hashes=dict(file_hashes or {}),
    )
