"""Save -> result on a large real repository: ``{files}`` vs a full run.

Copies two installed libraries' sources (pip and setuptools, 600+ Python
files) into a temporary resource declared with ``preset = "ruff"``, then,
through the real facade (in-process backend, real ruff):

- the floor: ruff run directly on one file, as the backend would run it;
- a save of that file (``validation.run`` with its path): from the start to
  the saved file's diagnostics in the language server's store, as the
  language server subscribes (partial results, ADR 0017): the event parsed
  and taken in, and the marks of every file it changed built;
- a full run of the whole repository.

Two configurations: the rules a CI gate commonly enforces (syntax errors and
undefined names: a handful of findings), and ruff's default rules, under
which this code has ~8,000 findings that every save carries over into the
stored result. Both carry the target.

Target: a save is within 1.5x the tool's own time on that file plus 100 ms.
Run from the repository root: ``python bench/bench_incremental.py [--json PATH] [--check]``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rows import Row, run_bench

from acp_backend.facade import BackendFacade, create_facade
from acp_backend.validation.runner import validator_environment
from acp_client.events import ValidationResultEvent, parse_event
from acp_client.models import ValidationResult
from acp_client.operations import ValidationRunResult
from lsp_server.mapping import file_diagnostics
from lsp_server.results import ResultStore

LIBRARIES = ("pip", "setuptools")
SAVED = "src/pip/_internal/req/req_install.py"
ROUNDS = 7
CONFIGS = {  # name -> extra ruff arguments
    "CI gate rules (E9,F63,F7,F82)": ["--select", "E9,F63,F7,F82"],
    "ruff's default rules": [],
}
SAVE_RATIO, SAVE_SLACK_MS = 1.5, 100.0


def ruff(extra: list[str], files: str) -> list[str]:
    """The ruff preset's command with ``extra`` arguments."""
    return [
        "ruff", "check", "--output-format", "json", "--no-fix", "--force-exclude",
        *extra, files,
    ]  # fmt: skip


def make_repository(root: Path, extra: list[str]) -> int:
    packages = next(Path(p) for p in sys.path if p.endswith("site-packages"))
    for name in LIBRARIES:
        shutil.copytree(
            packages / name, root / "src" / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    command = json.dumps(ruff(extra, "{files}"))
    toml = f'[[validations]]\npreset = "ruff"\nmode = "required"\ncommand = {command}\n'
    (root / "acp.toml").write_text(toml, encoding="utf-8")
    return sum(1 for _ in root.rglob("*.py"))


def tool_direct_ms(root: Path, extra: list[str]) -> float:
    command = ruff(extra, SAVED)
    env = validator_environment()
    times = []
    for _ in range(ROUNDS):
        began = time.perf_counter()
        subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


async def run_ms(
    facade: BackendFacade, root: Path, paths: list[str] | None, store: ResultStore
) -> tuple[float, int]:
    """Start to the validator's result in the language server's ``store``
    (with the marks of the files it changed built); and how many findings
    its event carried."""
    params: dict[str, Any] = {"resource": "bench"}
    if paths is not None:
        params["paths"] = [str(root / path) for path in paths]
    began = time.perf_counter()
    started = ValidationRunResult.model_validate(await facade.dispatch("validation.run", params))
    assert started.started_event_id is not None
    async for message in facade.subscribe(started.started_event_id - 1, partial=True):
        event = parse_event(message)
        if isinstance(event, ValidationResultEvent) and event.result.run_id == started.run_id:
            changed = take_in(store, event)
            for key in changed:  # the diagnostics a session would send for each file
                file_diagnostics(store.held(key), None, "utf-16")
            return (time.perf_counter() - began) * 1000, len(event.result.findings)
    raise RuntimeError("the event stream ended")


def take_in(store: ResultStore, event: ValidationResultEvent) -> set[tuple[str, str]]:
    if event.covered is None or event.base_result_id is None:
        return store.apply(event.result)
    changed = store.apply_partial(event.result, event.covered, event.base_result_id)
    assert changed is not None, "the store could not continue the result it showed"
    return changed


async def stored_findings(facade: BackendFacade) -> int:
    """The findings of the stored (merged) result: what a listing returns."""
    listed = await facade.dispatch("validation.list_results", {"resource": "bench"})
    return sum(len(ValidationResult.model_validate(r).findings) for r in listed["results"])


async def measure(root: Path, data: Path) -> dict[str, float]:
    facade = create_facade(data)
    try:
        await facade.dispatch("resource.register", {"path": str(root), "name": "bench"})
        store = ResultStore()
        full_ms, full_findings = await run_ms(facade, root, None, store)
        saves = []
        for _ in range(ROUNDS):
            (root / SAVED).touch()
            saves.append((await run_ms(facade, root, [SAVED], store))[0])
        return {
            "full": full_ms,
            "save": statistics.median(saves),
            "findings_full": full_findings,
            "findings_after_save": await stored_findings(facade),
        }
    finally:
        await facade.aclose()


def rows(
    label: str, files: int, tool_ms: float, measured: dict[str, float]
) -> list[dict[str, Any]]:
    target = SAVE_RATIO * tool_ms + SAVE_SLACK_MS
    save = measured["save"]
    carried = int(measured["findings_full"])
    return [
        {
            "measure": f"{label}: save -> diagnostics, one file of {files} ({carried} findings)",
            "value": round(save, 1),
            "unit": "ms",
            "floor": round(tool_ms, 1),
            "ratio": round(save / tool_ms, 2),
            "target": f"<= {SAVE_RATIO}x floor + {SAVE_SLACK_MS:g} ms ({target:.0f} ms)",
            "ok": save <= target,
        },
        {
            "measure": f"{label}: full run, {files} files",
            "value": round(measured["full"], 1),
            "unit": "ms",
            "floor": round(tool_ms, 1),
            "ratio": round(measured["full"] / tool_ms, 2),
            "target": "informative",
            "ok": True,
        },
        {
            "measure": f"{label}: findings after a save (floor: the full run's)",
            "value": measured["findings_after_save"],
            "unit": "findings",
            "floor": carried,
            "ratio": round(measured["findings_after_save"] / max(carried, 1), 2),
            "target": "== floor",
            "ok": measured["findings_after_save"] == carried,
        },
    ]


def measure_all() -> list[Row]:
    table: list[Row] = []
    for label, extra in CONFIGS.items():
        with tempfile.TemporaryDirectory() as temp:
            root, data = Path(temp) / "repo", Path(temp) / "data"
            files = make_repository(root, extra)
            tool_ms = tool_direct_ms(root, extra)
            measured = asyncio.run(measure(root, data))
        table += rows(label, files, tool_ms, measured)
    return table


if __name__ == "__main__":
    sys.exit(run_bench("incremental", __doc__.splitlines()[0], measure_all))
