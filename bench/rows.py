"""The command line and output shared by the row benchmarks (``bench_*.py``):
one printed line per measure, ``--json PATH`` writes
``{"name", "rows": [{"measure", "value", "unit", "floor", "ratio", "target", "ok"}]}``,
``--check`` exits 1 when a target is missed."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = dict[str, Any]


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
        args.json.write_text(json.dumps({"name": name, "rows": table}, indent=2) + "\n")
    return 1 if args.check and not all(row["ok"] for row in table) else 0
