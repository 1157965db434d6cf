"""Heap held per finding by acp-lsp in local mode, measured with tracemalloc.

``python bench/held_heap.py FINDINGS WORK_DIR``: a project under WORK_DIR
whose validators (``bench/run.py``'s burst: 10 findings in each file, at
most 10,000 per result) report FINDINGS in all, run through the
in-process backend and the language server's result store (the session's
mirror) and presenter as a session does; prints one JSON line
``{"findings": N, "bytes_per_finding": B}``.

What is counted is everything still allocated once every file's
diagnostics were built and sent: the results (shared by the backend's
baselines and the store in local mode), the store's indexes, the last
publish per file. Fixed costs (imports, caches, the first connection) are
paid by a warm-up run of a one-file project before tracing starts.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tracemalloc
from pathlib import Path

from acp_client.client import AcpClient
from acp_client.events import ValidationCompleted, ValidationResultEvent
from acp_client.head_start import DEFAULT_FACADE
from acp_client.transport.inprocess import InProcessTransport
from lsp_server.features.diagnostics.presenter import Presenter
from lsp_server.roots import FileKey, Roots

sys.path.insert(0, str(Path(__file__).resolve().parent))
import presenting
from run import acp_toml, burst_project, burst_validations, register

PER_FILE = 10


def project(root: Path, data_dir: Path, findings: int) -> None:
    files = findings // PER_FILE
    burst_project(root, files)
    acp_toml(root, burst_validations(files, PER_FILE))
    register(data_dir, root)


async def hold(client: AcpClient, presenter: Presenter, resource_id: str) -> None:
    """One run of every validation of the resource, taken in and sent."""
    after = await client.last_event_id()
    changed: set[FileKey] = set()
    started = await client.validation_run(resource_id)
    async for event in client.events(after):
        if isinstance(event, ValidationResultEvent):
            changed |= presenter.store.apply(event.result)
        elif isinstance(event, ValidationCompleted) and event.run_id == started.run_id:
            break
    for key in changed:
        presenter.publish_params(key)


async def main() -> None:
    findings, work = int(sys.argv[1]), Path(sys.argv[2])
    data_dir = work / "data"
    project(work / "warm-up", data_dir, PER_FILE)
    project(work / "held", data_dir, findings)
    client = AcpClient(InProcessTransport.load(DEFAULT_FACADE, data_dir))
    by_root = {Path(r.root).name: r for r in await client.resource_list()}
    warm_up, held = by_root["warm-up"], by_root["held"]
    roots = Roots()
    roots.remember(warm_up)
    roots.remember(held)
    presenter = presenting.presenter(roots)
    await hold(client, presenter, warm_up.id)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    await hold(client, presenter, held.id)
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    await client.aclose()
    print(json.dumps({"findings": findings, "bytes_per_finding": kept / findings}))


if __name__ == "__main__":
    asyncio.run(main())
