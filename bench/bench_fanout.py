"""One ``acp-backend serve`` shared by a team: events to 50, 200 and 500 SSE subscribers.

Run from the repository root: ``.venv/bin/python bench/bench_fanout.py``.
For each count a fresh ``acp-backend serve`` on 127.0.0.1 (any free port)
gets that many ``GET /acp/v1/events`` subscribers, spread over two client
processes on raw sockets (``bench/sse_subscribers.py``: one process with
httpx would be the bottleneck), then 20 validation runs started back to
back, each a validator printing 200 findings (``bench/emit_findings.py``).
Each count runs ``ROUNDS`` times and its rows are the medians of the
rounds' percentiles: on a shared 2-core machine one round swung by 2x.
One subscriber is the floor: the same burst with no fan-out to speak of
(the validators, SQLite, the machine's load).

- **Delivery p50 / p99**: per event and subscriber, from the event's ``at``
  (stamped by the server as it logs the event) to the arrival of its frame.
  Target at 500 subscribers: p99 <= 100 ms.
- **/health p50 / p99**, polled every 20 ms from the first run started to
  the last completion delivered. Target at 500: p99 <= 50 ms.
- **Subscribers with every completion**: each of the 20
  ``validation.completed`` events reached every subscriber. Target: all.

The server, the subscribers and the validators share the machine, so on
two cores the client processes' own reading is part of the delay measured.
Output as the other row benchmarks (``bench/rows.py``): ``--json PATH``,
``--check``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from bench_hover import row
from rows import Row, run_bench
from run import PY, REPO, Serve, acp_toml, emit, pct

from acp_client.discovery import read_backend_file

COUNTS = (50, 200, 500)
FLOOR = 1
ROUNDS = 5
"""Bursts per count; the median of their p99s is reported (with 3: 86 ms
in one run, 108 in the next)."""
RUNS, FINDINGS = 20, 200
CLIENT_PROCESSES = 2
HEALTH_EVERY = 0.02
DELIVERY_P99_MS, HEALTH_P99_MS = 100.0, 50.0


def project(root: Path) -> list[str]:
    """A project of ``RUNS`` validations, each ``FINDINGS`` findings in one file."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "m00000.py").write_text("x = 1\n" * 12, encoding="utf-8")
    names = [f"emit{n:02d}" for n in range(RUNS)]
    acp_toml(root, [(name, emit(1, FINDINGS, tag=f"B{n:03d}")) for n, name in enumerate(names)])
    return names


async def rpc(http: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = (await http.post("/acp/v1", json=request)).json()
    assert "result" in reply, reply
    return reply["result"]


async def subscribers(url: str, token: str, count: int) -> list[asyncio.subprocess.Process]:
    """``count`` subscribers over the client processes, each connected."""
    spread = min(count, CLIENT_PROCESSES)
    share = [count // spread + (n < count % spread) for n in range(spread)]
    script = str(REPO / "bench" / "sse_subscribers.py")
    processes = [
        await asyncio.create_subprocess_exec(
            PY, script, url, token, str(n), str(RUNS), stdout=asyncio.subprocess.PIPE
        )
        for n in share
    ]
    for process in processes:
        assert process.stdout is not None
        assert await process.stdout.readline() == b"ready\n", "a subscriber process failed"
    return processes


async def poll_health(http: httpx.AsyncClient, latencies: list[float], stop: asyncio.Event) -> None:
    """With the client already open: a client made here, as the burst
    starts, spent ~0.1 s of CPU on its TLS context beside the server."""
    while not stop.is_set():
        started = time.monotonic()
        (await http.get("/health")).raise_for_status()
        latencies.append((time.monotonic() - started) * 1000)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), HEALTH_EVERY)


async def fan_out(data_dir: Path, root: Path, names: list[str], count: int) -> dict[str, Any]:
    """Delays, /health latencies and per subscriber counts of one burst."""
    serve = Serve(data_dir)
    try:
        info = read_backend_file(data_dir)
        assert info is not None
        headers = {"Authorization": f"Bearer {info.token}"}
        async with httpx.AsyncClient(base_url=info.url, headers=headers, timeout=60) as http:
            resource = await rpc(http, "resource.register", {"path": str(root)})
            processes = await subscribers(info.url, info.token, count)
            health: list[float] = []
            stop = asyncio.Event()
            poller = asyncio.create_task(poll_health(http, health, stop))
            for name in names:
                run = {"resource": resource["id"], "validations": [name]}
                await rpc(http, "validation.run", run)
            reports = [json.loads((await p.communicate())[0]) for p in processes]
            assert not any(r["errors"] for r in reports), reports[0]["errors"][:3]
            stop.set()
            await poller
    finally:
        serve.stop()
    return {
        "delays": [d for r in reports for d in r["delays"]],
        "health": health,
        "completions": [c for r in reports for c in r["completions"]],
        "events": [e for r in reports for e in r["events"]],
    }


def rows_for(count: int, rounds: list[dict[str, Any]]) -> list[Row]:
    def median(key: str, q: float) -> float:
        return statistics.median(pct(measured[key], q) for measured in rounds)

    if count == FLOOR:
        return [
            row(f"delivery {name}, 1 subscriber (floor)", median("delays", q), "ms")
            for name, q in (("p50", 0.5), ("p99", 0.99))
        ]
    targeted = count == max(COUNTS)
    delivery_target = DELIVERY_P99_MS if targeted else None
    health_target = HEALTH_P99_MS if targeted else None
    # Every subscriber got every completion, and as many events as the others, each round.
    whole = min(sum(c == RUNS for c in measured["completions"]) for measured in rounds)
    same = all(len(set(measured["events"])) == 1 for measured in rounds)
    complete = row(f"subscribers with all {RUNS} completions, of {count}", whole, "subscribers")
    return [
        row(f"delivery p50, {count} subscribers", median("delays", 0.5), "ms"),
        row(
            f"delivery p99, {count} subscribers",
            median("delays", 0.99),
            "ms",
            target=delivery_target,
        ),
        row(f"/health p50 during the burst, {count} subscribers", median("health", 0.5), "ms"),
        row(
            f"/health p99, {count} subscribers", median("health", 0.99), "ms", target=health_target
        ),
        {**complete, "target": f"all {count}", "ok": whole == count and same},
    ]


async def measure() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="acp-fanout-") as name:
        work = Path(name)
        names = project(work / "project")
        for count in (FLOOR, *COUNTS):
            rounds = []
            for n in range(ROUNDS):
                print(f"fan-out: {count} subscribers, round {n + 1}", file=sys.stderr)
                rounds.append(
                    await fan_out(work / f"data{count}-{n}", work / "project", names, count)
                )
            rows += rows_for(count, rounds)
    return rows


if __name__ == "__main__":
    sys.exit(run_bench("fanout", __doc__.split("\n\n")[0], lambda: asyncio.run(measure())))
