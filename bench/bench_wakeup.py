"""Another process's result reaching the editor in local mode, and an idle server's CPU.

Run from the repository root: ``python bench/bench_wakeup.py [--json PATH] [--check]``.

``acp-lsp`` runs in local mode on a data dir, driven over stdio by a
standard-library editor (``bench/lsp_wire.py``), with a file open. This
process, as a CLI in a terminal would, records results on the same data
dir (the result stored, its ``validation.result`` event published), each
with a different finding in that file, at random intervals of 60-310 ms
(longer than the server's publish window, and at every phase of a
0.25 s polling loop).

- **Wake-up p50 / p90**: from ``publish`` returning (the event committed
  and the wake-up sent) to the file's ``publishDiagnostics`` reaching the
  editor, over ``SAMPLES`` results. Target: p90 <= 20 ms.
- **Idle CPU**: the server's CPU time (every thread, from
  ``/proc/<pid>/task/*/schedstat``) over ``IDLE`` seconds with nothing
  happening. Target: <= 1 ms. Its context switches are reported too
  (info): each is the server waking up.

It measures whatever ``lsp_server`` and ``acp_backend`` the server finds
first: ``PYTHONPATH=<another checkout>`` gives that code's numbers (the
server runs outside the repository for that reason).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from acp_backend.facade import BackendFacade, create_facade  # noqa: E402
from acp_client.events import ValidationResultEvent  # noqa: E402
from acp_client.models import Finding, Location  # noqa: E402
from bench.bench_hover import row  # noqa: E402
from bench.lsp_wire import Wire  # noqa: E402
from bench.rows import Row, run_bench  # noqa: E402
from bench.stored import failed_result  # noqa: E402

SAMPLES = 40
IDLE = 3.0
TARGET_P90_MS = 20.0
TARGET_IDLE_CPU_MS = 1.0


def findings(n: int) -> int:
    """Sample ``n``'s findings: one or two, so no sample is taken for the one before."""
    return n % 2 + 1


def record(facade: BackendFacade, resource_id: str, n: int) -> float:
    """Record result ``n`` as a run in this process would; when it was committed."""
    result = failed_result(
        "wakeup",
        resource_id,
        [
            Finding(location=Location(path="a.py", line=0, character=c), message=f"sample {n}")
            for c in range(findings(n))
        ],
    )
    facade.services.store.insert_result(result)
    facade.services.events.publish(ValidationResultEvent, result=result)
    return time.monotonic()


async def delivered(wire: Wire, uri: str, n: int, committed: float) -> float:
    """Milliseconds from ``committed`` to the publish of sample ``n`` on ``uri``."""
    arrivals = wire.arrivals()
    found: list[float] = []

    def arrived() -> bool:
        found.extend(p.at for p in arrivals() if p.uri == uri and p.count == findings(n))
        return bool(found)

    await wire.wait(arrived, seconds=30)
    return (found[0] - committed) * 1000


def cpu_and_switches(pid: int) -> tuple[float, int]:
    """The CPU milliseconds and context switches of every thread of ``pid``."""
    cpu_ns = switches = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        cpu_ns += int((task / "schedstat").read_text().split()[0])
        for line in (task / "status").read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                switches += int(line.split()[1])
    return cpu_ns / 1e6, switches


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="acp-wakeup-") as tmp:
        base = Path(tmp)
        data, project = base / "data", base / "proj"
        project.mkdir()
        document = project / "a.py"
        document.write_text("x = 1\n", encoding="utf-8")
        writer = create_facade(data)
        resource = await writer.dispatch("resource.register", {"path": str(project)})
        server = [sys.executable, "-m", "lsp_server", "--data-dir", str(data)]
        wire = await Wire.start(server, cwd=base)
        try:
            await wire.initialize(project)
            wire.open(document)
            uri = document.as_uri()
            await delivered(wire, uri, 0, record(writer, resource["id"], 0))  # subscribed
            delays = []
            for n in range(1, SAMPLES + 1):
                await asyncio.sleep(random.uniform(0.06, 0.31))
                delays.append(await delivered(wire, uri, n, record(writer, resource["id"], n)))
            await asyncio.sleep(0.5)  # the last publish's window is over
            cpu_before, switches_before = cpu_and_switches(wire.process.pid)
            await asyncio.sleep(IDLE)
            cpu_after, switches_after = cpu_and_switches(wire.process.pid)
        finally:
            await wire.close()
            await writer.aclose()
    delays.sort()
    p90 = delays[int(len(delays) * 0.9)]
    return [
        row(
            "wake-up p50: another process's result -> publishDiagnostics",
            statistics.median(delays),
            "ms",
        ),
        row(
            "wake-up p90: another process's result -> publishDiagnostics",
            p90,
            "ms",
            target=TARGET_P90_MS,
        ),
        row(
            f"idle server CPU over {IDLE:g} s",
            cpu_after - cpu_before,
            "ms",
            target=TARGET_IDLE_CPU_MS,
        ),
        row(
            f"idle server context switches over {IDLE:g} s",
            switches_after - switches_before,
            "switches",
        ),
    ]


if __name__ == "__main__":
    sys.exit(run_bench("wakeup", __doc__.split("\n\n")[0], lambda: asyncio.run(run())))
