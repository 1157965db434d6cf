"""Helpers for the plan tests: real git diffs, plan creation, fixable results."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp_backend.facade import BackendFacade
from acp_backend.ids import new_ulid
from acp_client.models import Finding, Plan, ValidationMode, ValidationResult

PY = sys.executable


def diff_of(root: Path, changes: dict[str, str | None]) -> str:
    """A real ``git diff`` of ``changes`` against ``root``'s files (None: delete)."""
    work = root.parent / "diffwork"
    subprocess.run(("cp", "-r", str(root), str(work)), check=True)
    git = ("git", "-c", "user.email=t@e", "-c", "user.name=t")
    subprocess.run((*git, "init", "-q"), cwd=work, check=True)
    subprocess.run((*git, "add", "-A"), cwd=work, check=True)
    subprocess.run((*git, "commit", "-qm", "base"), cwd=work, check=True)
    for path, text in changes.items():
        target = work / path
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    subprocess.run((*git, "add", "-A"), cwd=work, check=True)
    diff = subprocess.run(
        (*git, "diff", "--cached", "-M"), cwd=work, capture_output=True, text=True, check=True
    ).stdout
    subprocess.run(("rm", "-rf", str(work)), check=True)
    return diff


async def create(facade: BackendFacade, **params: Any) -> Plan:
    raw = await facade.dispatch("plan.create", {"resource": "p", "title": "t", **params})
    return Plan.model_validate(raw)


def leftovers(folder: Path, pattern: str = "*.tmp") -> list[Path]:
    """Files matching ``pattern`` under ``folder`` (blocking, which is fine in a test)."""
    return list(folder.rglob(pattern))


def git_commit_all(root: Path) -> None:
    git = ("git", "-c", "user.email=t@e", "-c", "user.name=t")
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "base")):
        subprocess.run((*git, *args), cwd=root, check=True)


def worktrees(root: Path) -> list[str]:
    listed = subprocess.run(
        ("git", "worktree", "list"), cwd=root, capture_output=True, text=True, check=True
    )
    return listed.stdout.strip().splitlines()


def ruff_result(resource_id: str, project: Path, findings: tuple[Finding, ...]) -> ValidationResult:
    """A failed required ``ruff`` result, hashing the files its findings name as they are."""
    now = datetime.now(UTC)
    paths = {f.location.path for f in findings if f.location}
    return ValidationResult(
        id=new_ulid(),
        validation="ruff",
        mode=ValidationMode.REQUIRED,
        passed=False,
        resource_id=resource_id,
        run_id=new_ulid(),
        started_at=now,
        finished_at=now,
        findings=findings,
        file_hashes={p: hashlib.sha256((project / p).read_bytes()).hexdigest() for p in paths},
    )
