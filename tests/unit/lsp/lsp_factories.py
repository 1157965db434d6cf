"""Contract objects for the language server's unit tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

from acp_client.models import Finding, Location, ValidationMode, ValidationResult

_ids = count(1)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def finding(
    path: str, line: int = 0, character: int = 0, message: str = "m", **more: Any
) -> Finding:
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
    resource_id: str = "R",
    at: int = 0,
    **more: Any,
) -> ValidationResult:
    n = next(_ids)
    return ValidationResult(
        id=f"result-{n}",
        validation=validation,
        mode=mode,
        passed=passed,
        resource_id=resource_id,
        run_id=f"run-{n}",
        started_at=T0 + timedelta(seconds=at),
        finished_at=T0 + timedelta(seconds=at + 1),
        findings=tuple(findings),
        **more,
    )


def todo_project(root: Path, command: str = "grep -Hn TODO a.txt") -> Path:
    """A real project with one informational validation that finds the
    ``TODO`` on line 2 of ``a.txt``, for tests that run a real check."""
    root.mkdir()
    (root / "acp.toml").write_text(
        '[[validations]]\nname = "todo"\nmode = "informational"\n'
        f'command = ["sh", "-c", "{command}"]\nformat = "pattern"\n'
        "pattern = '^(?P<path>[^:]+):(?P<line>\\d+):(?P<message>.*)$'\n",
        encoding="utf-8",
    )
    (root / "a.txt").write_text("one\nTODO two\n", encoding="utf-8")
    return root
