"""Benchmark: a 100-file plan, created from a diff, then previewed and applied.

Run from the repository root: ``.venv/bin/python bench/bench_plans.py``.
Through the reference backend's facade (in-process, a real SQLite data dir,
real files), each round makes 100 files of 200 lines, submits a unified
diff changing three lines in each (``plan.create``), then times
``plan.preview`` + ``plan.apply`` together: what an editor's resolve-then-
apply costs. The floor is writing the same 100 new contents with plain
``write_text`` in the same run: the journal, the hash guard and the fsyncs
are the difference. Prints a table; ``--json PATH`` writes
``{"name", "rows": [{"measure", "value", "unit", "floor", "ratio", "target",
"ok"}]}``; ``--check`` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rows import machine  # noqa: E402

from acp_backend.facade import create_facade  # noqa: E402
from acp_backend.plans.diffs import render_diff  # noqa: E402

FILES = 100
LINES = 200
ROUNDS = 5
TARGET_S = 1.0


def base_text(n: int) -> str:
    return "".join(f"value_{n}_{i} = {i}\n" for i in range(LINES))


def new_text(n: int) -> str:
    lines = base_text(n).splitlines(keepends=True)
    for i in (3, LINES // 2, LINES - 2):
        lines[i] = f"value_{n}_{i} = {i} * 2  # changed\n"
    return "".join(lines)


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


async def one_round(work: Path) -> dict[str, float]:
    project, data_dir = work / "project", work / "data"
    for n in range(FILES):
        (project / f"pkg{n % 10}").mkdir(parents=True, exist_ok=True)
        (project / f"pkg{n % 10}" / f"m{n:03d}.py").write_text(base_text(n))
    paths = [f"pkg{n % 10}/m{n:03d}.py" for n in range(FILES)]
    diff = "".join(render_diff(p, base_text(n), new_text(n)) for n, p in enumerate(paths))
    facade = create_facade(data_dir)
    try:
        await facade.dispatch("resource.register", {"path": str(project), "name": "bench"})
        start = time.perf_counter()
        plan = await facade.dispatch(
            "plan.create", {"resource": "bench", "title": "bench", "diff": diff}
        )
        created = time.perf_counter() - start
        start = time.perf_counter()
        preview = await facade.dispatch("plan.preview", {"plan_id": plan["id"]})
        await facade.dispatch(
            "plan.apply", {"plan_id": plan["id"], "expected_hash": preview["plan_hash"]}
        )
        applied = time.perf_counter() - start
    finally:
        await facade.aclose()
    assert all((project / p).read_text() == new_text(n) for n, p in enumerate(paths))
    floor = timed(lambda: [(project / p).write_text(new_text(n)) for n, p in enumerate(paths)])
    return {"create": created, "apply": applied, "floor": floor}


def row(measure: str, value: float, floor: float | None, target: float) -> dict[str, Any]:
    return {
        "measure": measure,
        "value": round(value, 4),
        "unit": "s",
        "floor": None if floor is None else round(floor, 4),
        "ratio": None if not floor else round(value / floor, 1),
        "target": target,
        "ok": value < target,
    }


def measure() -> list[dict[str, Any]]:
    rounds = []
    for _ in range(ROUNDS):
        with tempfile.TemporaryDirectory(prefix="acp-bench-plans-") as work:
            rounds.append(asyncio.run(one_round(Path(work))))
    median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    return [
        row(
            f"plan.preview + plan.apply, {FILES} files (p50)",
            median["apply"],
            median["floor"],
            TARGET_S,
        ),
        row(f"plan.create from a {FILES}-file diff (p50)", median["create"], None, TARGET_S),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    rows = measure()
    print("| measure | value | floor | ratio | target | ok |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        floor = "-" if r["floor"] is None else f"{r['floor']} s"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']}x"
        print(
            f"| {r['measure']} | {r['value']} s | {floor} | {ratio} | < {r['target']} s | "
            f"{'yes' if r['ok'] else 'NO'} |"
        )
    if args.json:
        payload = {"name": "plans", "machine": machine(), "rows": rows}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if args.check and not all(r["ok"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
