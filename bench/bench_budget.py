"""Where the time of a save and of ``check --no-run`` goes, stage by stage
and layer by layer, beside the floors measured in the same run.

Run from the repository root:
``python bench/bench_budget.py [--json PATH] [--rounds N]``.

**Save -> diagnostics** (8, 35 and 370 ruff findings, as ``bench/run.py``):
acp-lsp, efm-langserver in both setups and the two floor servers saved in
turn each round with ruff alone. acp-lsp runs under
``bench/stage_trace.py``, so each of its saves splits into stages, from the
editor's ``didSave`` to the ``publishDiagnostics`` reaching it. Its *own
work* is its p50 less ruff's; the best efm setup's p50 less ruff's is what
that work may cost to meet the target.

**``check --no-run``** on ``examples/demo``: the interpreter, then
asyncio with pydantic and one model, the ACP contract and client
(``acp_client.client``), the in-process backend on the data dir, and the
whole check, each taken in turn every round: each step's median less the
one before is what that layer adds.

Numbers only, no targets: ``bench/run.py`` judges the targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import run  # noqa: E402
import stage_trace as mark  # noqa: E402
from rows import machine  # noqa: E402
from run import Row  # noqa: E402

STAGES: tuple[tuple[str, str], ...] = (
    # (the mark that ends it, the stage); a save's marks are taken in this order
    (mark.SAVED, "editor -> didSave handler (reading the message)"),
    (mark.SPAWNING, "handler -> tool spawned (resource, acp.toml, run bookkeeping)"),
    (mark.TOOL_ENDED, "the tool, from its spawn to its end"),
    (mark.JUDGING, "its end -> judging (reaping it)"),
    (mark.STORING, "judging (parse, paths, columns), then to the store's thread"),
    (mark.PUBLISHING, "storing the result"),
    (mark.TAKING, "event log -> language server session"),
    (mark.MAPPING, "session -> publisher"),
)
ARRIVED = "mapping, writing, pipe -> editor"


def stage_times(marks: list[tuple[float, str]], sent: float, arrived: float) -> list[float]:
    """One save's stages, ms: each mark is the first of its kind after the
    one before (the tool's end: the last before judging begins)."""
    times, at, position = [], sent * 1000, 0
    for name, _ in STAGES:
        found = [i for i in range(position, len(marks)) if marks[i][1] == name]
        if name == mark.TOOL_ENDED:
            judged = next(i for i in range(position, len(marks)) if marks[i][1] == mark.JUDGING)
            found = [i for i in found if i < judged][-1:]
        index = found[0]
        times.append(marks[index][0] - at)
        at, position = marks[index][0], index + 1
    times.append(arrived * 1000 - at)
    return times


async def save_budget(tmp: Path, findings: int, rounds: int) -> list[Row]:
    root = tmp / f"save{findings}"
    file = run.ruff_project(root, findings)
    data_dir = tmp / f"save{findings}-data"
    run.register(data_dir, root)
    trace = tmp / f"trace{findings}.log"
    command = [run.RUFF, *run.RUFF_ARGS, "bench.py"]
    servers = {
        "acp-lsp": [run.PY, str(BENCH / "stage_trace.py"), str(trace), "--data-dir", str(data_dir)],
        "efm-langserver per file": run.efm(root, command),
        "efm-langserver workspace": run.efm(root, command, workspace=True),
        "pygls floor": run.floor("pygls", root, command),
        "raw floor": run.floor("raw", root, command),
    }
    found = {name: server for name, server in servers.items() if server is not None}
    spans = await run.interleaved_saves(found, root, file, findings, rounds)
    totals = {name: [run.ms(span) for span in taken] for name, taken in spans.items()}
    marks = [(float(at), stage) for at, stage in _lines(trace)]
    per_save = [
        stage_times([m for m in marks if sent * 1000 <= m[0] <= arrived * 1000], sent, arrived)
        for sent, arrived in spans["acp-lsp"]
    ]
    rows = [
        Row("save", f"{name}, {findings} findings", run.pct(values, 0.5), "ms p50")
        for name, values in totals.items()
    ]
    for k, (_, stage) in enumerate([*STAGES, ("", ARRIVED)]):
        median = statistics.median(save[k] for save in per_save)
        rows.append(Row("save", f"acp-lsp stage: {stage}, {findings} findings", median, "ms p50"))
    ruff = run.pct(totals[run.RUFF_ALONE], 0.5)
    efm = min(run.pct(totals[name], 0.5) for name in totals if name.startswith("efm"))
    own = run.pct(totals["acp-lsp"], 0.5) - ruff
    rows.append(
        Row(
            "save",
            f"acp-lsp's own work (its p50 less ruff's), {findings} findings",
            own,
            "ms",
            "the best efm setup's, less ruff's",
            efm - ruff,
        )
    )
    return rows


def _lines(trace: Path) -> list[tuple[str, str]]:
    return [
        (at, stage)
        for at, _, stage in (line.partition(" ") for line in trace.read_text().splitlines())
    ]


CONTRACT = "import acp_client.client"
LAYERS: tuple[tuple[str, str], ...] = (
    ("the interpreter", "pass"),
    ("asyncio, pydantic and one model", run.STACK),
    ("the ACP contract and client", CONTRACT),
    (
        "the in-process backend on the data dir",
        "import sys\nfrom pathlib import Path\n"
        "from acp_backend.facade import create_facade\ncreate_facade(Path(sys.argv[1]))",
    ),
)
"""Each layer's own code; a layer runs with every one above it, so that
what it adds is its own (the contract alone does not load asyncio, which
the backend's event log does: run apart, asyncio counted twice, once in
its row and again in the backend's)."""


def no_run_budget(tmp: Path, rounds: int) -> list[Row]:
    demo = tmp / "demo"
    shutil.copytree(run.REPO / "examples" / "demo", demo)
    data_dir = tmp / "check-data"
    run.register(data_dir, demo)
    acp = str(Path(run.PY).parent / "acp-lsp")
    run.command_ms([acp, "check", "--data-dir", str(data_dir), str(demo)])  # results to read
    commands: dict[str, Sequence[str]] = {}
    for depth, (name, _) in enumerate(LAYERS, start=1):
        code = "\n".join(own for _, own in LAYERS[:depth])
        # Ended as the check ends (ADR 0031), without the interpreter's teardown.
        commands[name] = [run.PY, "-c", f"{code}\nimport os\nos._exit(0)", str(data_dir)]
    commands["acp-lsp check --no-run"] = [
        acp, "check", "--no-run", "--data-dir", str(data_dir), str(demo)
    ]  # fmt: skip
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for n in range(rounds + 1):  # the first round warms caches, unmeasured
        for name in run.rotated(list(commands), n):
            ms = run.command_ms(commands[name])
            if n:
                samples[name].append(ms)
    rows, before = [], None
    for name, values in samples.items():
        median = statistics.median(values)
        measure = name if before is None else f"{name}, with all above"
        spread = run.median_spread(values)
        rows.append(Row("check --no-run", measure, median, "ms", spread=spread))
        if before is not None:
            rows.append(Row("check --no-run", f"added by {name}", median - before, "ms"))
        before = median
    return rows


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        run.as_installed(tmp)
        rows = [row for n in (8, 35, 370) for row in await save_budget(tmp, n, args.rounds)]
        rows += no_run_budget(tmp, args.rounds // 2)
    print(run.markdown(rows))
    if args.json:
        payload = {
            "name": "Where the missed targets' time goes (bench/bench_budget.py)",
            "machine": machine(),
            "rows": [{**asdict(row), "ratio": row.ratio} for row in rows],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
