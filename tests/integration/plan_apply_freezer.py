"""Apply a plan and freeze half-way, so a test can ``kill -9`` this process.

Usage: python plan_apply_freezer.py DATA_DIR PLAN_ID HASH staging|renaming
Prints FROZEN once the apply is stuck: after the first file was staged
(``staging``) or after the first target was replaced (``renaming``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from acp_backend.facade import create_facade
from acp_backend.plans import journal


def freeze() -> None:
    sys.stdout.write("FROZEN\n")
    sys.stdout.flush()
    time.sleep(600)


def main() -> None:
    data_dir, plan_id, plan_hash, where = sys.argv[1:5]
    if where == "staging":
        stage = journal._stage
        staged: list[str] = []

        def stage_then_freeze(tmp: str, data: bytes, mode: int) -> None:
            stage(tmp, data, mode)
            if ".acp-" in tmp:
                staged.append(tmp)
                if len(staged) == 2:
                    freeze()

        journal._stage = stage_then_freeze  # type: ignore[assignment]
    else:

        def rename_one_then_freeze(staged: Any) -> None:
            first = next(op for op in staged.ops if op.tmp is not None)
            os.replace(first.tmp, first.target)
            freeze()

        journal.roll_forward = rename_one_then_freeze  # type: ignore[assignment]

    async def apply() -> None:
        facade = create_facade(Path(data_dir))
        await facade.dispatch("plan.apply", {"plan_id": plan_id, "expected_hash": plan_hash})

    asyncio.run(apply())


if __name__ == "__main__":
    main()
