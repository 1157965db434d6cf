"""``acp-lsp check --fix`` applies the tools' fixes through plan.create/preview/apply."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from acp_backend.facade import create_facade
from acp_client.models import (
    Finding,
    FindingFix,
    Location,
    PlanOrigin,
    TextEdit,
)
from lsp_server.cli_check import main
from tests.unit.plans.plan_helpers import ruff_result


def unused_os(path: str) -> Finding:
    """What ruff reports, with its fix, for `import os` on line 0 of ``path``."""
    where = Location(path=path, line=0, character=0, end_line=1, end_character=0)
    fix = FindingFix(description="Remove `os`", edits=(TextEdit(location=where, new_text=""),))
    return Finding(
        location=Location(path=path, line=0, character=7),
        message="`os` imported but unused",
        code="F401",
        fixes=(fix,),
    )


def test_check_fix_applies_the_fixes_in_scope_as_one_plan(tmp_path: Path, project: Path) -> None:
    data_dir = tmp_path / "data"

    # The validation the result stands for: fails while a.py imports os.
    check = [sys.executable, "-c", "import sys; sys.exit('import os' in open('src/a.py').read())"]
    (project / "acp.toml").write_text(
        f'[[validations]]\nname = "ruff"\nmode = "required"\ncommand = {json.dumps(check)}\n'
        'format = "exit-code"\napplies_to = ["*.py"]\n'
    )

    async def prepare() -> None:
        facade = create_facade(data_dir)
        try:
            raw = await facade.dispatch("resource.register", {"path": str(project), "name": "p"})
            paths = ["src/a.py", "src/c.py"]
            for path in paths:
                (project / path).write_text("import os\nx = 1\n")
            findings = tuple(unused_os(path) for path in paths)
            facade.services.store.insert_result(ruff_result(raw["id"], project, findings))
        finally:
            await facade.aclose()

    asyncio.run(prepare())
    outside_scope = (project / "src" / "c.py").read_text()

    status = main([str(project / "src" / "a.py"), "--no-run", "--fix", "--data-dir", str(data_dir)])

    # The apply re-ran the validation (and check waited for it): nothing is left.
    assert status == 0
    assert (project / "src" / "a.py").read_text() == "x = 1\n"
    assert (project / "src" / "c.py").read_text() == outside_scope  # not in the PATHs given

    async def plans() -> list[dict[str, object]]:
        facade = create_facade(data_dir)
        try:
            return (await facade.dispatch("plan.list", {}))["plans"]  # type: ignore[no-any-return]
        finally:
            await facade.aclose()

    [plan] = asyncio.run(plans())
    assert (plan["state"], plan["origin"], plan["author"]) == (
        "applied",
        PlanOrigin.FINDING_FIX,
        "acp-lsp check --fix",
    )
