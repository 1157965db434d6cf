"""The language server's publish path in-process: diagnostics -> the JSON of
``publishDiagnostics``, every ratio from one run.

A 10,000-finding result on 1,000 files (10 findings a file, 40 lines each)
taken in by a ``Presenter`` as the server holds it, then
``Presenter.publish_params`` for every file, as a burst's publishes call it:
the marks converted into the negotiated encoding (UTF-16) against the file
on disk, and written as JSON. Each round starts from a fresh presenter, so
every file is read once (a burst's first publish); best of ``ROUNDS``.

- **Non-ASCII lines**: every line starts with ``é😀``, so every column needs
  a conversion. **ASCII lines**: the common case.
- **A second validation's result** on the same files, published after the
  first (what overlapping validators send when nothing holds them back):
  20 diagnostics a file, the files read again (the text cache is kept
  small: holding a burst's files costs more heap than it saves time).

Floor: ``json.dumps`` of the same publishes as plain dicts (what any server
building the params as dicts and serialising them pays for the JSON alone,
without reading a file or converting a column). Target: <= 2x the floor.

Run from the repository root: ``python bench/bench_publish.py [--json PATH] [--check]``.
It measures whatever ``lsp_server`` is on the path, so running it with
another checkout first on ``PYTHONPATH`` gives that code's numbers.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import presenting
from rows import Row, run_bench

from acp_client.models import Finding, Location, Resource, ValidationMode, ValidationResult
from lsp_server.features.diagnostics.presenter import Presenter
from lsp_server.roots import FileKey, Roots

FILES, PER_FILE, LINES = 1_000, 10, 40
ROUNDS = 9
TARGET = 2.0
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def write_files(root: Path, start: str) -> list[str]:
    paths = [f"pkg/m{n:04d}.py" for n in range(FILES)]
    (root / "pkg").mkdir(parents=True)
    for path in paths:
        text = "".join(f"{start} = value_{i} + other({i})  # {i}\n" for i in range(LINES))
        (root / path).write_text(text, encoding="utf-8")
    return paths


def burst(validation: str, paths: list[str], at: int = 0) -> ValidationResult:
    findings = [
        Finding(
            location=Location(path=path, line=n * 3, character=4 + n),
            message=f"`name{n}` imported but unused",
            code="F401",
        )
        for path in paths
        for n in range(PER_FILE)
    ]
    return ValidationResult(
        id=f"result-{validation}",
        validation=validation,
        mode=ValidationMode.REQUIRED,
        passed=False,
        resource_id="R",
        run_id=f"run-{validation}",
        started_at=T0 + timedelta(seconds=at),
        finished_at=T0 + timedelta(seconds=at + 1),
        findings=tuple(findings),
    )


def presenter(root: Path) -> tuple[Presenter, list[FileKey]]:
    roots = Roots()
    roots.remember(Resource(id="R", name="bench", root=str(root), created_at=T0))
    return presenting.presenter(roots), []


def publish(view: Presenter, keys: list[FileKey]) -> list[str]:
    return [params for key in keys for params in view.publish_params(key)]


def best_ms(prepare: Callable[[], Any], timed: Callable[[Any], Any]) -> float:
    """Best of ``ROUNDS`` of ``timed(prepare())``, only ``timed`` on the clock."""
    best = float("inf")
    for _ in range(ROUNDS):
        state = prepare()
        began = time.perf_counter()
        timed(state)
        best = min(best, time.perf_counter() - began)
    return best * 1000


def floor_ms(sent: list[str]) -> float:
    """``json.dumps`` of the same publishes as plain dicts."""
    plain = [json.loads(params) for params in sent]
    return best_ms(lambda: plain, lambda dicts: [json.dumps(d) for d in dicts])


def row(measure: str, value: float, floor: float) -> Row:
    return {
        "measure": measure,
        "value": round(value, 1),
        "unit": "ms",
        "floor": round(floor, 1),
        "ratio": round(value / floor, 2),
        "target": f"<= {TARGET}x floor",
        "ok": value <= TARGET * floor,
    }


def first_publish(root: Path, start: str) -> Row:
    paths = write_files(root, start)
    result = burst("lint", paths)

    def prepare() -> tuple[Presenter, list[FileKey]]:
        view, changed = presenter(root)
        changed.extend(view.store.apply(result))
        return view, changed

    value = best_ms(prepare, lambda state: publish(*state))
    sent = publish(*prepare())
    assert len(sent) == FILES, "every file is published"
    lines = "ASCII" if start.isascii() else f"non-ASCII ({start!r} first)"
    return row(
        f"publish_params: {FILES * PER_FILE:,} findings on {FILES:,} files, {lines} lines",
        value,
        floor_ms(sent),
    )


def second_publish(root: Path) -> Row:
    paths = write_files(root, "é😀")
    first, second = burst("lint", paths), burst("types", paths, at=1)

    def prepare() -> tuple[Presenter, list[FileKey]]:
        view, changed = presenter(root)
        publish(view, list(view.store.apply(first)))
        changed.extend(view.store.apply(second))
        return view, changed

    value = best_ms(prepare, lambda state: publish(*state))
    sent = publish(*prepare())
    return row(
        f"publish_params: a second validation's {FILES * PER_FILE:,} findings on the same files",
        value,
        floor_ms(sent),
    )


def measure() -> list[Row]:
    table = []
    with tempfile.TemporaryDirectory() as temp:
        table.append(first_publish(Path(temp) / "wide", "é😀"))
        table.append(first_publish(Path(temp) / "ascii", "x_y"))
        table.append(second_publish(Path(temp) / "again"))
    return table


if __name__ == "__main__":
    sys.exit(run_bench("publish", __doc__.splitlines()[0], measure))
