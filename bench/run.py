"""Benchmarks: event -> publishDiagnostics latency, a 10,000-finding burst, RSS.

Run from the repository root: ``.venv/bin/python bench/run.py``. Each
measurement runs ``acp-lsp`` and, as the floor, ``bench/floor_server.py`` (a
bare pygls server on the same client and transport), in local mode (backend
in the server's process) and over HTTP + SSE (``acp-backend serve``). Events
come from ``bench_facade`` inside the backend's process and carry their
birth time in the finding message; latency is the editor's receive time
minus that. Prints a Markdown table (``--json PATH`` also writes the numbers).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
FACADE = "bench.bench_facade:create_facade"
FILES = 1000
FINDINGS = 10_000
SERVERS = ("acp-lsp", "floor")
MODES = ("local", "http")
SERVE = (
    "import sys; from pathlib import Path; from acp_backend.http_server import serve; "
    "sys.exit(serve(Path(sys.argv[1]), facade=sys.argv[2]))"
)


@dataclass
class Measurement:
    server: str
    mode: str
    p50_ms: float
    p99_ms: float
    burst_s: float
    idle_rss_mb: float
    rss_mb: float


def make_project(root: Path) -> None:
    """1,000 files of 12 lines, non-ASCII before each finding's column."""
    text = "".join(f"é😀= {n}  # line {n}\n" for n in range(12))
    (root / "pkg").mkdir(parents=True)
    for n in range(FILES):
        (root / "pkg" / f"m{n:04d}.py").write_text(text, encoding="utf-8")


async def register(data_dir: Path, root: Path) -> str:
    from acp_backend.facade import create_facade

    facade = create_facade(data_dir)
    try:
        resource = await facade.dispatch("resource.register", {"path": str(root)})
        return str(resource["id"])
    finally:
        await facade.aclose()


class Serve:
    """``acp-backend serve`` hosting the scripted facade."""

    def __init__(self, data_dir: Path, env: dict[str, str]) -> None:
        (data_dir / "backend.json").unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(data_dir), FACADE],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while not (data_dir / "backend.json").exists():
            if time.monotonic() > deadline:
                raise RuntimeError("acp-backend serve did not start")
            time.sleep(0.05)
        time.sleep(0.1)  # written atomically; give it a beat to be listening
        info = json.loads((data_dir / "backend.json").read_text())
        self.url = f"http://127.0.0.1:{info['port']}"
        self.token_file = data_dir.parent / "token"
        self.token_file.write_text(info["token"])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def command(server: str, mode: str, data_dir: Path, root: Path, serve: Serve | None) -> list[str]:
    remote = ["--acp", serve.url, "--token-file", str(serve.token_file)] if serve else []
    common = ["--data-dir", str(data_dir), "--facade", FACADE, *remote]
    if server == "acp-lsp":
        return [sys.executable, "-m", "lsp_server", *common]
    return [sys.executable, str(REPO / "bench" / "floor_server.py"), *common, "--root", str(root)]


async def session(
    server: str, mode: str, plan: dict[str, Any], data_dir: Path, root: Path
) -> tuple[list[tuple[float, types.PublishDiagnosticsParams]], float]:
    """Run one scripted plan; returns what the editor received, and the
    server's RSS in MiB once everything arrived."""
    env = {**os.environ, "ACP_BENCH_PLAN": json.dumps(plan)}
    serve = Serve(data_dir, env) if mode == "http" else None
    received: list[tuple[float, types.PublishDiagnosticsParams]] = []
    client = LanguageClient("bench", "0")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish(params: types.PublishDiagnosticsParams) -> None:
        if params.diagnostics:
            received.append((time.time(), params))

    for method in (types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE):
        client.feature(method)(lambda _: None)
    try:
        await client.start_io(*command(server, mode, data_dir, root, serve), env=env, cwd=REPO)
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="bench")],
            )
        )
        client.initialized(types.InitializedParams())
        expected = plan["count"] if plan["kind"] == "latency" else FILES
        deadline = time.monotonic() + 120
        while len({p.uri for _, p in received} if plan["kind"] == "burst" else received) < expected:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{server}/{mode}: only {len(received)} of {expected} arrived")
            await asyncio.sleep(0.01)
        rss = rss_mib(client)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    finally:
        if serve:
            serve.stop()
    return received, rss


def rss_mib(client: LanguageClient) -> float:
    assert client._server is not None
    status = Path(f"/proc/{client._server.pid}/status").read_text()
    kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    return kib / 1024


def born(params: types.PublishDiagnosticsParams) -> float:
    return float(params.diagnostics[0].message.split("t=")[1])


async def measure(
    server: str, mode: str, *, data_dir: Path, root: Path, resource_id: str, events: int
) -> Measurement:
    latency_plan = {
        "resource_id": resource_id,
        "kind": "latency",
        "count": events,
        "interval": 0.01,
        "files": 200,
    }
    received, idle_rss = await session(server, mode, latency_plan, data_dir, root)
    latencies = sorted((at - born(p)) * 1000 for at, p in received)
    burst_plan = {
        "resource_id": resource_id,
        "kind": "burst",
        "files": FILES,
        "findings": FINDINGS,
    }
    received, rss = await session(server, mode, burst_plan, data_dir, root)
    first_born = born(received[0][1])
    count = sum(len(p.diagnostics) for _, p in received[-FILES:])
    assert count == FINDINGS, f"{server}/{mode}: {count} diagnostics in the last publishes"
    return Measurement(
        server,
        mode,
        p50_ms=statistics.median(latencies),
        p99_ms=latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        burst_s=received[-1][0] - first_born,
        idle_rss_mb=idle_rss,
        rss_mb=rss,
    )


def table(results: list[Measurement]) -> str:
    floor = {(m.mode): m for m in results if m.server == "floor"}
    rows = [
        "| server | mode | p50 ms | p99 ms | 10k burst s | RSS MiB after latency run "
        "| RSS MiB holding 10k | p50 / floor | burst / floor |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m in results:
        f = floor[m.mode]
        rows.append(
            f"| {m.server} | {m.mode} | {m.p50_ms:.2f} | {m.p99_ms:.2f} | {m.burst_s:.3f} | "
            f"{m.idle_rss_mb:.1f} | {m.rss_mb:.1f} | {m.p50_ms / f.p50_ms:.2f} | "
            f"{m.burst_s / f.burst_s:.2f} |"
        )
    return "\n".join(rows)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300, help="latency samples per run")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        root = Path(tmp) / "project"
        make_project(root)
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        resource_id = await register(data_dir, root)
        results = [
            await measure(
                server,
                mode,
                data_dir=data_dir,
                root=root,
                resource_id=resource_id,
                events=args.events,
            )
            for mode in MODES
            for server in SERVERS
        ]
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps([asdict(m) for m in results], indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
