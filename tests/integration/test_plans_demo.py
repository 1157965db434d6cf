"""The issue's done-when, backend part, on a copy of examples/demo kept in git:
``acp-backend plan propose demo ruff`` runs ruff's fix in a worktree sandbox,
the plan shows in ``acp-backend plan list``, previews as a diff, and applies:
it is complete, although ruff cannot fix everything the demo gets wrong,
since what remains was there before the plan. An apply after the file
changed is refused with CONFLICT, writing nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acp_backend.facade import create_facade
from acp_client.models import ValidationResult

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo"
ACP_BACKEND = str(Path(sys.executable).parent / "acp-backend")
WAIT = 120.0


@pytest.fixture(params=["git", "folder"])
def demo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".ruff_cache", "__pycache__"))
    if request.param == "git":
        git = ("git", "-c", "user.email=t@e", "-c", "user.name=t")
        for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "demo")):
            subprocess.run((*git, *args), cwd=root, check=True)
    return root


def sandbox_findings(data_dir: Path, plan_id: str) -> set[tuple[str, str | None]]:
    """(path, code) of every finding of the plan's validation run on its sandbox."""

    async def read() -> set[tuple[str, str | None]]:
        facade = create_facade(data_dir)
        try:
            listed = await facade.dispatch(
                "validation.list_results", {"resource": "demo", "plan": plan_id}
            )
        finally:
            await facade.aclose()
        results = [ValidationResult.model_validate(r) for r in listed["results"]]
        return {
            (f.location.path, f.code)
            for result in results
            for f in result.findings
            if f.location is not None
        }

    return asyncio.run(read())


def cli(data_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        (ACP_BACKEND, "--data-dir", str(data_dir), *args),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def propose(data_dir: Path) -> dict[str, object]:
    cli(data_dir, "plan", "propose", "demo", "ruff")
    [plan] = json.loads(cli(data_dir, "plan", "list", "--json").stdout)["plans"]
    return plan  # type: ignore[no-any-return]


def test_propose_fix_on_ruff_previews_and_applies(demo: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    cli(data_dir, "resource", "add", str(demo))
    plan = propose(data_dir)
    # What remains in the sandbox (E722, F821) was on the resource before the
    # plan: the plan made nothing worse, so it is complete.
    assert plan["state"] == "complete", plan["reason"]
    assert plan["paths"] == ["inventory.py"] and plan["source_validation"] == "ruff"
    # The preset's fixer prints a diff (--fix-only --diff); the sandbox holds
    # the fixed code, and its results are those of the fixed code.
    fixed = Path(str(plan["sandbox_root"]), "inventory.py").read_text()
    assert "import os\n" not in fixed
    found = sandbox_findings(data_dir, str(plan["id"]))
    assert ("inventory.py", "F401") not in found
    assert {("inventory.py", "E722"), ("greetings.py", "F821")} <= found  # beyond ruff's fix
    listed = cli(data_dir, "plan", "list").stdout
    assert str(plan["id"]) in listed and "Fix ruff findings" in listed
    (row,) = [line for line in listed.splitlines() if str(plan["id"]) in line]
    assert re.search(r"\b\d+\.\d MB\b", row), row  # the sandbox's disk use

    shown = cli(data_dir, "plan", "preview", str(plan["id"])).stdout
    assert "-import os\n" in shown and "plan_hash: sha256:" in shown

    applied = cli(data_dir, "plan", "apply", str(plan["id"])).stdout
    assert "applied" in applied and "(forced)" not in applied
    assert "re-ran validations: 1 required failed" in applied  # ruff's unfixable findings
    assert "import os\n" not in (demo / "inventory.py").read_text()


def test_an_apply_after_the_file_changed_is_a_conflict(demo: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    cli(data_dir, "resource", "add", str(demo))
    plan = propose(data_dir)
    preview = json.loads(cli(data_dir, "plan", "preview", str(plan["id"]), "--json").stdout)

    edited = (demo / "inventory.py").read_text() + "# the user's own edit\n"
    (demo / "inventory.py").write_text(edited)
    refused = cli(
        data_dir,
        "plan",
        "apply",
        str(plan["id"]),
        "--hash",
        preview["plan_hash"],
        check=False,
    )

    assert refused.returncode == 2
    assert "inventory.py changed since the preview" in refused.stderr
    assert (demo / "inventory.py").read_text() == edited
    state = json.loads(cli(data_dir, "plan", "show", str(plan["id"]), "--json").stdout)["state"]
    assert state == "complete"
