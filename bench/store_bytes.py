"""Bytes the backend's store keeps per run of a 10,000-finding validator.

Runs a real validator (a command printing 10,000 ``path:line:col: message``
lines) through ``validation.run`` on an in-process backend, RUNS times, and
prints the database's live bytes (pages in use, after a WAL checkpoint)
after the first run and after the last, and the growth per run. Run from
the repository root: ``python bench/store_bytes.py [--runs N]``; point
``PYTHONPATH`` at another checkout to measure it the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from acp_client.connect import connect
from acp_client.events import ValidationCompleted

FINDINGS = 10_000
PRINT = (
    f"python3 -c \"[print(f'src/m{{i % 100}}.py:{{i % 400 + 1}}:1: finding number {{i}}')"
    f' for i in range({FINDINGS})]"'
)


def live_bytes(database: Path) -> int:
    conn = sqlite3.connect(database)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages, free, size = (
            conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_count", "freelist_count", "page_size")
        )
    finally:
        conn.close()
    return int((pages - free) * size)


async def measure(runs: int) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        (root / "src").mkdir(parents=True)
        (root / "acp.toml").write_text(
            '[[validations]]\nname = "many"\nmode = "informational"\nformat = "pattern"\n'
            f"shell = true\ncommand = {json.dumps(PRINT)}\n",
            encoding="utf-8",
        )
        data_dir = Path(tmp) / "data"
        sizes = []
        async with await connect("local", data_dir=data_dir) as client:
            await client.initialize("store-bytes")
            resource = await client.resource_register(str(root))
            for _ in range(runs):
                started = await client.validation_run(resource.id)
                async for event in client.events(after=started.started_event_id):
                    if isinstance(event, ValidationCompleted) and event.run_id == started.run_id:
                        break
                sizes.append(live_bytes(data_dir / "acp.sqlite3"))
    return {
        "runs": runs,
        "after_first": sizes[0],
        "after_last": sizes[-1],
        "per_run": (sizes[-1] - sizes[0]) // max(1, runs - 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.runs))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
