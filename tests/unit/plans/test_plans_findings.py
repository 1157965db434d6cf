"""A finding whose tool supplied a fix becomes a one-finding plan, nothing run."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_backend.facade import BackendFacade
from acp_client.errors import Conflict
from acp_client.models import (
    Finding,
    FindingFix,
    Location,
    Plan,
    PlanOrigin,
    TextEdit,
    ValidationResult,
)
from tests.unit.plans.plan_helpers import ruff_result


def fix_line(path: str, line: int, new_text: str, description: str) -> FindingFix:
    where = Location(path=path, line=line, character=0, end_line=line + 1, end_character=0)
    return FindingFix(description=description, edits=(TextEdit(location=where, new_text=new_text),))


def stored_result(facade: BackendFacade, project: Path, *findings: Finding) -> ValidationResult:
    result = ruff_result(facade.services.registry.get("p").id, project, findings)
    facade.services.store.insert_result(result)
    return result


def unused_import(line: int, fixes: tuple[FindingFix, ...]) -> Finding:
    return Finding(
        location=Location(path="src/a.py", line=line, character=7),
        message="unused import",
        code="F401",
        fixes=fixes,
    )


async def test_a_findings_fix_is_a_one_finding_plan(facade: BackendFacade, project: Path) -> None:
    finding = unused_import(0, (fix_line("src/a.py", 0, "", "Remove unused import: `os`"),))
    result = stored_result(facade, project, finding)
    raw = await facade.dispatch(
        "plan.create", {"resource": "p", "findings": [{"result_id": result.id, "finding": 0}]}
    )
    plan = Plan.model_validate(raw)
    assert (plan.origin, plan.title, plan.source_validation) == (
        PlanOrigin.FINDING_FIX,
        "Remove unused import: `os`",
        "ruff",
    )
    preview = await facade.dispatch("plan.preview", {"plan_id": plan.id})
    await facade.dispatch("plan.apply", {"plan_id": plan.id, "expected_hash": preview["plan_hash"]})
    assert (project / "src" / "a.py").read_text() == "import sys\n\nprint(sys.argv)\n"


async def test_overlapping_fixes_are_skipped_and_recorded(
    facade: BackendFacade, project: Path
) -> None:
    first = unused_import(0, (fix_line("src/a.py", 0, "", "drop os"),))
    clash = unused_import(0, (fix_line("src/a.py", 0, "import os as _os\n", "alias os"),))
    other = unused_import(3, (fix_line("src/a.py", 3, "print(1)\n", "print less"),))
    result = stored_result(facade, project, first, clash, other)
    refs = [{"result_id": result.id, "finding": i} for i in range(3)]
    plan = Plan.model_validate(
        await facade.dispatch("plan.create", {"resource": "p", "findings": refs})
    )
    assert plan.title == "Apply 2 fixes"
    assert [d.chosen for d in plan.decisions] == ["skipped"]
    preview = await facade.dispatch("plan.preview", {"plan_id": plan.id})
    assert preview["changes"][0]["new_text"] == "import sys\n\nprint(1)\n"


async def test_a_fix_for_content_that_changed_since_is_a_conflict(
    facade: BackendFacade, project: Path
) -> None:
    result = stored_result(facade, project, unused_import(0, (fix_line("src/a.py", 0, "", "x"),)))
    (project / "src" / "a.py").write_text("import os  # edited since\n")
    with pytest.raises(Conflict):
        await facade.dispatch(
            "plan.create", {"resource": "p", "findings": [{"result_id": result.id, "finding": 0}]}
        )
