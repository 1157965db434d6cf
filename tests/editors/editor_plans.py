"""Plans made on the demo before an editor opens it: one applied as an agent
would (``plan.create`` with a decision, ``plan.preview``, ``plan.apply``),
and a "Propose fix" whose sandbox stays for the editor to preview."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
from pathlib import Path

from editor_harness import BIN, EDITOR_TIMEOUT_S, DemoProject

from acp_backend.facade import create_facade
from acp_client.models import Plan, PlanState

BARE = "    except:\n"
FIXED = "    except Exception:\n"
DECISION = {
    "question": "Which exceptions should load() swallow?",
    "chosen": "Exception",
    "alternatives": ["OSError and ValueError"],
    "rationale": "a bare except also swallows KeyboardInterrupt",
    "confidence": 0.7,
}


def apply_inventory_plan(root: Path, data_dir: Path) -> int:
    """Replace the bare ``except:`` of inventory.py; returns that 0-based line."""
    text = (root / "inventory.py").read_text(encoding="utf-8")
    line = text[: text.index(BARE)].count("\n")
    asyncio.run(_apply(data_dir, text.replace(BARE, FIXED)))
    return line


async def _apply(data_dir: Path, new_text: str) -> None:
    facade = create_facade(data_dir)
    try:
        raw = await facade.dispatch(
            "plan.create",
            {
                "resource": "demo",
                "title": "Catch Exception, not everything",
                "author": "fixer-agent",
                "files": [{"path": "inventory.py", "new_text": new_text}],
                "decisions": [DECISION],
            },
        )
        plan = Plan.model_validate(raw)
        async with asyncio.timeout(20):
            while plan.state in (PlanState.QUEUED, PlanState.PROCESSING):
                await asyncio.sleep(0.05)
                plan = Plan.model_validate(await facade.dispatch("plan.get", {"plan_id": plan.id}))
        preview = await facade.dispatch("plan.preview", {"plan_id": plan.id})
        await facade.dispatch(
            "plan.apply", {"plan_id": plan.id, "expected_hash": preview["plan_hash"]}
        )
    finally:
        await facade.aclose()


def propose_fix(project: DemoProject, validation: str = "ruff") -> Path:
    """The backend's "Propose fix" from its command line: the validation's
    fix runs in a sandbox under the data dir, and the plan keeps it. Returns
    the sandbox's root (where its copy of acp.toml is)."""
    done = subprocess.run(
        [
            str(BIN / "acp-backend"),
            "--data-dir",
            str(project.data_dir),
            "plan",
            "propose",
            project.root.name,
            validation,
        ],
        env=project.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=EDITOR_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (sandbox,) = (
        line.split(":", 1)[1].strip()
        for line in done.stdout.splitlines()
        if line.strip().startswith("sandbox:")
    )
    return Path(sandbox)


def create_plan(project: DemoProject, diff: str, title: str) -> str:
    """``acp-backend plan create``: ``diff`` (a unified diff, paths relative
    to the demo's root) submitted as a plan on the demo, not applied.
    Returns the plan's id."""
    handle, name = tempfile.mkstemp(suffix=".diff", dir=project.root.parent)
    diff_file = Path(name)
    os.close(handle)
    diff_file.write_text(diff, encoding="utf-8")
    done = _backend(
        project, "plan", "create", project.root.name, "--diff", str(diff_file), "--title", title
    )
    (plan_id,) = (
        line.split()[1].rstrip(":") for line in done.splitlines() if line.startswith("plan ")
    )
    return plan_id


def plan_list(project: DemoProject) -> list[dict[str, object]]:
    """Every plan of the demo's data dir, as ``acp-backend plan list --json`` prints them."""
    plans = json.loads(_backend(project, "plan", "list", "--json"))["plans"]
    assert isinstance(plans, list), plans
    return plans


def _backend(project: DemoProject, *args: str) -> str:
    done = subprocess.run(
        [str(BIN / "acp-backend"), "--data-dir", str(project.data_dir), *args],
        env=project.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=EDITOR_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
