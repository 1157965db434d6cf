"""Parsing 100 MB of pathological tool output.

Each case feeds output built to hurt a parser to the validation's real
judging path (``validator.judge_bounded``: a child process, bounded by the
timeout) and measures, against a floor:

- the default GNU pattern on 100 MB of lines that made the old pattern
  backtrack quadratically (``f.py:1:1: x`` + spaces + ``y``); floor: ten
  times the time for 10 MB (what a linear parse takes);
- one 100 MB line (its message must stay bounded); same floor;
- a catastrophic user pattern (exponential backtracking) with a 1 s
  timeout: it must stop near the timeout's floor (2 s), not run for ages;
- the longest stall of the event loop while a 100 MB parse runs; floor: the
  longest stall of an idle loop ticking every 10 ms.

Run from the repository root: ``python bench/bench_parsing.py [--json PATH] [--check]``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rows import Row, run_bench

from acp_backend.validation.config import ValidationConfig, parse_config
from acp_backend.validation.raw import MAX_MESSAGE
from acp_backend.validation.runner import Ending, ProcessOutcome
from acp_backend.validation.validator import MIN_PARSE_BUDGET, Verdict, judge_bounded

SIZE = 100 * 1024 * 1024
# The loop's worst pause: the 6,500 findings of the bait arrive as Python
# objects, and the garbage collector's full passes over a process that holds
# them account for most of it (a parse alone pauses it ~10 ms).
STALL_MS = 250
TRIES = 3
T = TypeVar("T")


def config(body: str) -> ValidationConfig:
    (declared,) = parse_config(
        f'[[validations]]\nname = "v"\nmode = "required"\ncommand = ["x"]\n{body}\n'
    )
    return declared


def bait(size: int) -> str:
    """Lines that made the old default pattern backtrack quadratically."""
    line = "f.py:1:1: x" + " " * 16_000 + "y\n"
    return line * (size // len(line))


def one_line(size: int) -> str:
    return "f.py:1:1: error: " + "z" * size


async def stalls(work: Awaitable[T]) -> tuple[T, float, float]:
    """``work``'s result, how long it took, and the longest gap between
    10 ms ticks of the event loop meanwhile (ms)."""
    longest = 0.0

    async def tick() -> None:
        nonlocal longest
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            longest = max(longest, (now - last) * 1000 - 10)
            last = now

    ticker = asyncio.create_task(tick())
    began = time.perf_counter()
    result = await work
    took = time.perf_counter() - began
    ticker.cancel()
    return result, took, longest


async def judged(body: str, stdout: str, root: Path) -> Verdict:
    process = ProcessOutcome(Ending.EXITED, status=1, stdout=stdout)
    return await judge_bounded(config(body), process, root, 10_000, datetime.now(UTC))


def row(
    measure: str, value: float, unit: str, floor: float, target: str, *, ok: bool
) -> dict[str, Any]:
    return {
        "measure": measure,
        "value": round(value, 3),
        "unit": unit,
        "floor": round(floor, 3),
        "ratio": round(value / floor, 2) if floor else None,
        "target": target,
        "ok": ok,
    }


async def linear(body: str, make: Callable[[int], str], root: Path) -> tuple[float, float, Verdict]:
    """Seconds to judge ``make(SIZE)``, ten times the seconds for a tenth of
    it (the floor, if the parse is linear), and the big verdict; each the
    best of ``TRIES`` (the machine is shared)."""
    tenth, whole = make(SIZE // 10), make(SIZE)
    tenths, wholes = [], []
    for _ in range(TRIES):
        tenths.append((await stalls(judged(body, tenth, root)))[1])
        verdict, took, _ = await stalls(judged(body, whole, root))
        wholes.append(took)
    return min(wholes), 10 * min(tenths), verdict


async def measure(root: Path) -> list[dict[str, Any]]:
    (root / "f.py").write_text("x = 1\n")
    await judged('format = "pattern"', "f.py:1:1: x\n", root)  # starts the forkserver
    _, _, idle = await stalls(asyncio.sleep(1))
    idle = max(idle, 1.0)
    rows = []
    took, floor, verdict = await linear('format = "pattern"', bait, root)
    assert verdict.outcome == "completed", verdict.message
    rows.append(row("default pattern, 100 MB of backtracking bait", took, "s", floor,
                    "<= 1.5x floor (linear)", ok=took <= 1.5 * floor))  # fmt: skip
    pauses = [
        (await stalls(judged('format = "pattern"', bait(SIZE), root)))[2] for _ in range(TRIES)
    ]
    stall = statistics.median(pauses)
    rows.append(row("event loop's longest stall during that parse (median)", stall, "ms", idle,
                    f"<= {STALL_MS} ms", ok=stall <= STALL_MS))  # fmt: skip
    took, floor, verdict = await linear('format = "pattern"', one_line, root)
    rows.append(row("one 100 MB line", took, "s", floor, "<= 1.5x floor (linear)",
                    ok=took <= 1.5 * floor))  # fmt: skip
    longest = max(len(f.message) for f in verdict.findings)
    rows.append(row("longest message from it", longest, "characters", MAX_MESSAGE,
                    f"<= {MAX_MESSAGE} + a note", ok=longest <= MAX_MESSAGE + 100))  # fmt: skip
    evil = "format = \"pattern\"\npattern = '^(?P<message>(a+)+)$'\ntimeout = 1"
    verdict, took, stall = await stalls(judged(evil, "a" * 40 + "!\n", root))
    assert verdict.outcome == "timed_out", verdict.message
    rows.append(row("catastrophic user pattern, timeout 1 s: stopped after", took, "s",
                    MIN_PARSE_BUDGET, "<= floor + 1 s",
                    ok=took <= MIN_PARSE_BUDGET + 1))  # fmt: skip
    rows.append(row("event loop's longest stall meanwhile", stall, "ms", idle,
                    f"<= {STALL_MS} ms", ok=stall <= STALL_MS))  # fmt: skip
    return rows


def measure_all() -> list[Row]:
    with tempfile.TemporaryDirectory() as temp:
        return asyncio.run(measure(Path(temp)))


if __name__ == "__main__":
    sys.exit(run_bench("parsing", __doc__.splitlines()[0], measure_all))
