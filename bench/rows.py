"""The command line and output shared by the row benchmarks (``bench_*.py``):
one printed line per measure, ``--json PATH`` writes
``{"name", "machine", "rows": [{"measure", "value", "unit", "floor", "ratio", "target", "ok"}]}``,
``--check`` exits 1 when a target is missed."""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def machine() -> dict[str, Any]:
    """Where the numbers were taken: CPUs, load when they were, Python, date."""
    return {
        "cpus": os.cpu_count(),
        "load": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
    }


def run_bench(name: str, description: str, measure: Callable[[], list[Row]]) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    table = measure()
    for row in table:
        mark = "ok" if row["ok"] else "MISSED"
        print(
            f"{row['measure']}: {row['value']} {row['unit']} (floor {row['floor']}, "
            f"ratio {row['ratio']}, target {row['target']}) {mark}"
        )
    if args.json:
        payload = {"name": name, "machine": machine(), "rows": table}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if args.check and not all(row["ok"] for row in table) else 0
