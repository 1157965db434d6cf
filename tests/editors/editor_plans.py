"""A plan applied to the demo before an editor opens it, as an agent would:
``plan.create`` with a decision, ``plan.preview``, ``plan.apply``."""

from __future__ import annotations

import asyncio
from pathlib import Path

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
