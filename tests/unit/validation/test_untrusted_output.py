"""Output is untrusted: no input may freeze the backend, crash the parse, or
turn into one gigantic message (issue 8, items 4 and 5)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acp_backend.validation import isolation
from acp_backend.validation.config import DEFAULT_PATTERN
from acp_backend.validation.presets import PRESETS
from acp_backend.validation.raw import MAX_LINE, MAX_MESSAGE
from acp_backend.validation.runner import Ending, ProcessOutcome
from acp_backend.validation.validator import (
    IN_PROCESS_OUTPUT,
    LINEAR_PATTERNS,
    judge,
    judge_bounded,
)
from acp_client.models import ResultOutcome
from tests.unit.validation.validation_helpers import declared


def exited(stdout: str) -> ProcessOutcome:
    return ProcessOutcome(Ending.EXITED, status=1, stdout=stdout)


def test_the_default_pattern_is_linear_on_long_runs_of_spaces() -> None:
    # The old pattern took ~0.9 s on 8,000 spaces and minutes on 300,000.
    line = "f.py:1:1: x" + " " * 300_000 + "y"
    began = time.perf_counter()
    match = DEFAULT_PATTERN.search(line)
    assert time.perf_counter() - began < 0.1
    assert match is not None and match["path"] == "f.py"


# Lines each pattern read in process matches (GNU, flake8, tsc, yamllint,
# ripgrep): the adversarial lines below are their prefixes run on.
SAMPLE_LINES = (
    "f.py:1:5:1:5: error: Bad thing  [assignment]",
    "f.py:1:5: E501 line too long (89 > 79 characters)",
    "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
    'a.yaml:1:1: [warning] missing document start "---" (document-start)',
    "f.py:2:3:    # TODO: later",
)


def adversarial_lines(sample: str) -> list[str]:
    """Each prefix of ``sample`` (up to a separator) followed by one of its
    characters or pairs of characters repeated to a whole line's length
    (``MAX_LINE``), as it is and ending in a character that fails the
    match: where a pattern with nested or overlapping repeats backtracks."""
    units = {sample[i : i + size] for size in (1, 2) for i in range(len(sample) - size + 1)}
    units |= {" ", "\t", "(", "[", ":", "0"}
    prefixes = {
        sample[:k]
        for k in range(len(sample) + 1)
        if k in (0, len(sample)) or sample[k - 1] in " :([,"
    }
    runs = [
        (prefix + unit * (MAX_LINE // len(unit)))[:MAX_LINE]
        for prefix in prefixes
        for unit in units
    ]
    return runs + [run[:-1] + "!" for run in runs]  # and a last character that fails the match


NAMED_PATTERNS = {
    "default": DEFAULT_PATTERN.pattern,
    **{
        name: preset.fields["pattern"]
        for name, preset in PRESETS.items()
        if "pattern" in preset.fields
    },
}


def test_the_patterns_read_in_process_are_the_default_and_the_presets() -> None:
    assert len(NAMED_PATTERNS) > 1 and set(NAMED_PATTERNS.values()) == LINEAR_PATTERNS


@pytest.mark.parametrize("pattern", NAMED_PATTERNS.values(), ids=NAMED_PATTERNS.keys())
def test_every_pattern_read_in_process_takes_linear_time(pattern: str) -> None:
    """A small output is read in the backend's own process when its pattern
    is one of these (the default's, a preset's), where nothing could stop a
    runaway match. A line of 16,000 characters takes ~0.1 ms with a linear
    pattern and about a second with a quadratic one; the bound between."""
    compiled = re.compile(pattern)
    samples = [sample for sample in SAMPLE_LINES if compiled.search(sample)]
    assert samples, f"add a line {pattern!r} matches to SAMPLE_LINES"
    slowest, worst = 0.0, ""
    for sample in samples:
        for line in adversarial_lines(sample):
            began = time.perf_counter()
            compiled.search(line)
            took = time.perf_counter() - began
            if took > slowest:
                slowest, worst = took, line
    assert slowest < 0.05, f"{slowest:.3f} s on {worst[:80]!r}..."


def test_the_default_pattern_still_splits_severity_and_code(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\n")
    output = "f.py:1:5:1:5: error: Bad thing  [assignment]\nf.py:1: note: see [docs]\n"
    verdict = judge(declared('format = "pattern"'), exited(output), tmp_path)
    error, note = verdict.findings
    assert (error.code, error.message) == ("assignment", "Bad thing")
    assert (note.code, note.message) == ("docs", "see")


def test_a_huge_line_becomes_a_bounded_message(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\n")
    output = "f.py:1:1: error: " + "z" * 10_000_000 + "\n"
    verdict = judge(declared('format = "pattern"'), exited(output), tmp_path)
    (finding,) = verdict.findings
    assert len(finding.message) < MAX_MESSAGE + 100


async def test_a_catastrophic_user_pattern_is_stopped_by_the_timeout_and_the_loop_runs(
    tmp_path: Path,
) -> None:
    config = declared("format = \"pattern\"\npattern = '^(?P<message>(a+)+)$'\ntimeout = 1")
    output = "a" * 40 + "!\n"  # exponential backtracking: would run for ages
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    began = time.monotonic()
    verdict = await judge_bounded(config, exited(output), tmp_path, 100, datetime.now(UTC))
    elapsed = time.monotonic() - began
    ticker.cancel()
    assert verdict.outcome is ResultOutcome.TIMED_OUT and "reading its output" in verdict.message
    assert elapsed < 5  # the 2 s floor of a parse's budget, and no more
    assert ticks > elapsed / 0.01 / 4  # the event loop kept running meanwhile


async def test_parsing_happens_in_a_process_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated: list[str] = []
    real = isolation.judge_isolated

    async def recording(*args: Any, **kwargs: Any) -> Any:
        isolated.append(args[0].name)
        return await real(*args, **kwargs)

    monkeypatch.setattr(isolation, "judge_isolated", recording)
    (tmp_path / "f.py").write_text("x = 1\n")
    line = "f.py:1:1: error: e\n"
    cases = {
        "user": (
            "format = \"pattern\"\npattern = '^(?P<path>[^:]+):(?P<line>\\d+): (?P<message>.*)$'",
            line,
        ),
        "big": ('format = "pattern"', line * (IN_PROCESS_OUTPUT // len(line) + 1)),
        "small": ('format = "pattern"', line),
        "preset": ('preset = "todo"', "f.py:1:1: TODO\n"),
        "sarif": ('format = "sarif"', '{"version": "2.1.0", "runs": []}'),
    }
    for name, (body, output) in cases.items():
        config = replace(declared(body), name=name)
        verdict = await judge_bounded(config, exited(output), tmp_path, 100, datetime.now(UTC))
        assert verdict.outcome is ResultOutcome.COMPLETED, verdict.message
    # A user's pattern, or more than a save's output: a forked child. A
    # small output read by a linear parser (a preset's pattern is one): here,
    # with no fork to pay for.
    assert isolated == ["user", "big"]


def test_deeply_nested_sarif_is_a_clean_error(tmp_path: Path) -> None:
    nested = '{"runs": [' + "[" * 100_000 + "]" * 100_000 + "]}"
    verdict = judge(declared('format = "sarif"'), exited(nested), tmp_path)
    assert verdict.outcome is ResultOutcome.ERROR
    assert "nested too deeply" in verdict.message


def test_a_5000_digit_integer_is_a_clean_error(tmp_path: Path) -> None:
    number = "9" * 5000
    for body, output in (
        ('format = "sarif"', '{"version": "2.1.0", "runs": [], "x": ' + number + "}"),
        (
            'format = "json"\nmapping = { findings = "[]", message = "m", line = "l" }',
            '[{"m": "x", "l": ' + number + "}]",
        ),
    ):
        verdict = judge(declared(body), exited(output), tmp_path)
        assert verdict.outcome is ResultOutcome.ERROR, body
        assert "digits" in verdict.message


def test_huge_line_numbers_are_ignored_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\n")
    sarif = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "t"}},
                "results": [
                    {
                        "message": {"text": "far"},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "f.py"},
                                    "region": {"startLine": 10**40, "startColumn": 10**30},
                                }
                            }
                        ],
                    }
                ],
            }
        ],
    }
    verdict = judge(declared('format = "sarif"'), exited(json.dumps(sarif)), tmp_path)
    (finding,) = verdict.findings
    assert finding.location is not None and finding.location.line == 2**31 - 1


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


async def test_cancelling_a_run_kills_its_parse_at_once(tmp_path: Path) -> None:
    from acp_backend.validation import fork_server

    config = declared("format = \"pattern\"\npattern = '^(?P<message>(a+)+)$'\ntimeout = 60")
    parse = asyncio.create_task(
        judge_bounded(config, exited("a" * 40 + "!\n"), tmp_path, 100, datetime.now(UTC))
    )
    server = None
    for _ in range(200):  # until the child is running
        await asyncio.sleep(0.02)
        process = fork_server.SERVER._process
        if process is not None and children_of(process.pid):
            server = process.pid
            break
    assert server is not None
    parse.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await parse
    for _ in range(100):
        if not children_of(server):
            break
        await asyncio.sleep(0.02)
    assert children_of(server) == []
