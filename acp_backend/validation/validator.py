"""One validation, one result: run the command, read its output, judge it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp_backend.ids import new_ulid
from acp_backend.validation import isolation
from acp_backend.validation.config import DEFAULT_PATTERN, OutputFormat, ValidationConfig
from acp_backend.validation.file_facts import FileFacts
from acp_backend.validation.isolation import ParseCrashed, ParseTimeout
from acp_backend.validation.locations import FindingConverter, FindingWire, findings_of
from acp_backend.validation.parsers import parse_output
from acp_backend.validation.presets import PRESETS
from acp_backend.validation.raw import OutputError, ToolFailure
from acp_backend.validation.runner import (
    OUTPUT_CAP,
    Ending,
    ProcessOutcome,
    output_text,
    run_command,
    validator_environment,
)
from acp_backend.validation.scope import merged_findings, merged_hashes, scoped_command
from acp_client.covered import covers
from acp_client.models import Finding, ResultOutcome, SeverityHint, ValidationResult

log = logging.getLogger(__name__)

MAX_FINDINGS = 10_000  # per result: beyond this an editor shows noise, not information
MIN_PARSE_BUDGET = 2.0  # seconds a parse always gets, however long the tool took
IN_PROCESS_OUTPUT = 32 * 1024
"""Characters of output (a usual save's) read here rather than in a forked
child, when no user pattern reads them: a few milliseconds of linear work,
less than the fork and the transfer would cost."""
_LINEAR_FORMATS = (OutputFormat.SARIF, OutputFormat.ACP_JSON, OutputFormat.JSON)
LINEAR_PATTERNS = frozenset(
    {DEFAULT_PATTERN.pattern}
    | {preset.fields["pattern"] for preset in PRESETS.values() if "pattern" in preset.fields}
)
"""The patterns a small output is read with here: the default and the
presets' own, each shown to take linear time on adversarial lines by a unit
test. Any other pattern (the user's) may backtrack for ages, and a match
can be stopped only by killing the process it runs in: a forked child."""
_TAIL_LINES = 10
_TAIL_CHARS = 2000
_LEVEL_ORDER = (SeverityHint.HINT, SeverityHint.INFO, SeverityHint.WARNING, SeverityHint.ERROR)


@dataclass(frozen=True)
class RunScope:
    """``paths``: the root-relative files whose change started the run (None: a
    full run); ``previous``: each validation's latest result, into which a
    run that covered only some files is merged."""

    paths: tuple[str, ...] | None = None
    previous: Mapping[str, ValidationResult] = field(default_factory=dict)


@dataclass(frozen=True)
class RunTarget:
    """Where a run happens: a resource's root, or a plan's sandbox of it."""

    resource_id: str
    root: Path
    run_id: str
    plan_id: str | None = None
    paths: tuple[str, ...] | None = None
    previous: Mapping[str, ValidationResult] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str
    outcome: ResultOutcome = ResultOutcome.COMPLETED
    findings: tuple[Finding, ...] = ()
    file_hashes: dict[str, str] = field(default_factory=dict)
    handed_on_void: bool = False  # the findings handed on before it are not its (bad output)
    known_files: int = 0  # files read by an earlier parse (``file_facts``), not again


@dataclass(frozen=True)
class Ran:
    """A validator's result and, when it was merged into an earlier one
    (``base``), the files the run covered, whose findings come first (ADR 0017)."""

    result: ValidationResult
    covered: frozenset[str] | None = None
    base: ValidationResult | None = None

    def event_fields(self) -> dict[str, Any]:
        """A ``validation.result`` event's fields: only what the run covered."""
        if self.covered is None or self.base is None:
            return {"result": self.result}
        findings = self.result.findings
        own = next((i for i, f in enumerate(findings) if not covers(f, self.covered)), None)
        return {
            "result": self.result.model_copy(update={"findings": findings[:own]}),
            "covered": tuple(sorted(self.covered)),
            "base_result_id": self.base.id,
        }


async def run_validation(
    config: ValidationConfig,
    target: RunTarget,
    *,
    output_cap: int = OUTPUT_CAP,
    max_findings: int = MAX_FINDINGS,
) -> ValidationResult:
    return (await run_scoped(config, target, output_cap, max_findings)).result


async def run_scoped(
    config: ValidationConfig, target: RunTarget, output_cap: int, max_findings: int
) -> Ran:
    started = datetime.now(UTC)
    scope = scoped_command(config, target.root, target.paths)
    if scope is None:
        return Ran(make_result(config, target, started, Verdict(True, "no files to check")))
    if scope.command:
        process = await _run(config, target.root, scope.command, output_cap)
        verdict = await judge_bounded(
            config, process, target.root, max_findings, started, run=target.run_id
        )
    else:  # only deleted files changed: nothing to run, their findings go
        verdict = Verdict(True, "no findings")
    if scope.covered is None or verdict.outcome is not ResultOutcome.COMPLETED:
        return Ran(make_result(config, target, started, verdict))
    base = target.previous.get(config.name)
    verdict = _merged(verdict, scope.covered, base)
    return Ran(make_result(config, target, started, verdict), scope.covered, base)


async def _run(
    config: ValidationConfig, root: Path, command: tuple[str, ...] | str, output_cap: int
) -> ProcessOutcome:
    cwd = root / config.cwd if config.cwd else root
    report = cwd / config.output_file if config.output_file else None
    if report is not None:
        report.unlink(missing_ok=True)  # a stale report must not pass for this run's
    process = await run_command(
        command,
        cwd=cwd,
        time_limit=config.timeout,
        shell=config.shell,
        output_cap=output_cap,
        env={**validator_environment(), **config.env} if config.env else None,
    )
    if report is None or process.ending is not Ending.EXITED:
        return process
    try:
        with report.open("rb") as file:
            data = file.read(output_cap + 1)
    except OSError as exc:
        return replace(process, stdout="", error=f"it wrote no report {config.output_file}: "
                       f"{exc.strerror}")  # fmt: skip
    if len(data) > output_cap:
        return replace(process, ending=Ending.OUTPUT_TOO_LARGE)
    return replace(process, stdout=output_text(data))


async def judge_bounded(
    config: ValidationConfig,
    process: ProcessOutcome,
    root: Path,
    max_findings: int,
    started: datetime,
    *,
    run: str | None = None,
) -> Verdict:
    if (
        process.ending is not Ending.EXITED
        or config.format is OutputFormat.EXIT_CODE
        or _small_and_linear(config, process)
    ):
        return judge(config, process, root, max_findings)
    elapsed = (datetime.now(UTC) - started).total_seconds()
    budget = max(config.timeout - elapsed, MIN_PARSE_BUDGET)
    begun = time.monotonic()
    try:
        verdict = await isolation.judge_isolated(
            config, process, root, max_findings, budget, run=run
        )
    except ParseTimeout:
        return Verdict(
            False,
            f"reading its output took longer than the {config.timeout:g} s timeout "
            f"({time.monotonic() - begun:.1f} s); stopped",
            ResultOutcome.TIMED_OUT,
        )
    except ParseCrashed as exc:
        return Verdict(False, str(exc), ResultOutcome.ERROR)
    log.debug(
        "%s: output read in %.0f ms, %d of its %d files as an earlier parse read them",
        config.name,
        (time.monotonic() - begun) * 1000,
        verdict.known_files,
        len(verdict.file_hashes),
    )
    return verdict


def _small_and_linear(config: ValidationConfig, process: ProcessOutcome) -> bool:
    if len(process.stdout) + len(process.stderr) > IN_PROCESS_OUTPUT:
        return False
    if config.format is OutputFormat.PATTERN:
        return config.pattern.pattern in LINEAR_PATTERNS
    return config.format in _LINEAR_FORMATS


def _merged(
    verdict: Verdict, covered: frozenset[str], previous: ValidationResult | None
) -> Verdict:
    findings = merged_findings(verdict.findings, covered, previous)
    carried = len(findings) - sum(1 for f in verdict.findings if covers(f, covered))
    message = verdict.message
    if carried:
        message = f"{_count(len(findings))} ({carried} kept from files this run did not check)"
        message += f"; this run: {verdict.message}"
    return replace(
        verdict,
        passed=verdict.passed and not findings,
        message=message,
        findings=findings,
        file_hashes=merged_hashes(verdict.file_hashes, covered, previous),
    )


def make_result(
    config: ValidationConfig, target: RunTarget, started: datetime, verdict: Verdict
) -> ValidationResult:
    return ValidationResult(
        id=new_ulid(),
        validation=config.name,
        mode=config.mode,
        passed=verdict.passed,
        message=verdict.message,
        resource_id=target.resource_id,
        plan_id=target.plan_id,
        run_id=target.run_id,
        started_at=started,
        finished_at=datetime.now(UTC),
        outcome=verdict.outcome,
        findings=verdict.findings,
        declared_at=config.declared_at,
        file_hashes=verdict.file_hashes,
    )


def judge(
    config: ValidationConfig,
    process: ProcessOutcome,
    root: Path,
    max_findings: int = MAX_FINDINGS,
    hand_on: Callable[[list[FindingWire]], None] | None = None,
    *,
    facts: FileFacts | None = None,
) -> Verdict:
    """Passed means: the command exited with an ``ok_status`` (0) and reported no findings.

    With ``hand_on``, the findings go to it as JSON-ready data, in batches of
    ``HAND_ON_BATCH`` as they are read (the parsing child streams them to the
    backend), and the verdict has none of its own. ``facts``: files earlier
    parses read (the parsing child's, from the fork server)."""
    if process.ending is Ending.NOT_STARTED:
        return Verdict(False, _not_started(config, process.error), ResultOutcome.ERROR)
    if process.ending is Ending.TIMED_OUT:
        return Verdict(
            False,
            f"timed out after {config.timeout:g} s; its processes were killed",
            ResultOutcome.TIMED_OUT,
        )
    if process.ending is Ending.OUTPUT_TOO_LARGE:
        return Verdict(
            False,
            "its output exceeded the size limit; its processes were killed",
            ResultOutcome.ERROR,
        )
    status = _status(process.status)
    ok = process.status in config.ok_status
    if config.format is OutputFormat.EXIT_CODE:
        tail = output_tail(process)
        return Verdict(ok, f"{status}\n{tail}" if tail else status)
    if process.error:  # its report file could not be read
        return Verdict(False, f"{process.error} ({status})", ResultOutcome.ERROR)
    base = str(root / config.cwd) if config.cwd else None
    converter = FindingConverter(
        str(root), base, config.path_map, facts, bom_counted=config.columns_count_bom
    )
    kept = _Kept(max_findings, hand_on)
    total = below = 0
    floor = _LEVEL_ORDER.index(config.min_level) if config.min_level else 0
    try:
        for raw in parse_output(config, process.stdout, process.stderr):
            if raw.severity is not None and _LEVEL_ORDER.index(raw.severity) < floor:
                below += 1
            elif converter.admits(raw):
                total += 1
                if kept.room():
                    kept.add(converter.convert(raw))
    except ToolFailure as exc:
        return Verdict(
            False, f"{exc} ({status})", ResultOutcome.ERROR, kept.done(), converter.file_hashes
        )
    except OutputError as exc:
        message = f"{exc} ({status})"
        tail = output_tail(process)
        message = f"{message}\n{tail}" if tail else message
        return Verdict(False, message, ResultOutcome.ERROR, handed_on_void=True)
    passed = total == 0 and ok
    ignored = (converter.dropped, converter.missing, below)
    return Verdict(
        passed,
        _summary(total, kept.count, ignored, process, ok),
        findings=kept.done(),
        file_hashes=converter.file_hashes,
        known_files=converter.known,
    )


HAND_ON_BATCH = 500
"""Findings per batch handed on: a batch is read by the backend on a worker
thread, and reading 10,000 at once would hold the GIL ~25 ms."""


class _Kept:
    """The findings a verdict keeps (at most ``limit``): collected and read
    as contract findings at the end, or handed on in batches."""

    def __init__(self, limit: int, hand_on: Callable[[list[FindingWire]], None] | None) -> None:
        self._limit = limit
        self._hand_on = hand_on
        self._pending: list[FindingWire] = []
        self.count = 0

    def room(self) -> bool:
        return self.count < self._limit

    def add(self, finding: FindingWire) -> None:
        self.count += 1
        self._pending.append(finding)
        if self._hand_on is not None and len(self._pending) >= HAND_ON_BATCH:
            self._hand_on(self._pending)
            self._pending = []

    def done(self) -> tuple[Finding, ...]:
        """What the verdict holds: every finding, or none when handed on
        (the last batch goes now; an empty one is never sent)."""
        pending, self._pending = self._pending, []
        if self._hand_on is None:
            return findings_of(pending)
        if pending:
            self._hand_on(pending)
        return ()


def _not_started(config: ValidationConfig, error: str) -> str:
    preset = PRESETS.get(config.preset or "")
    if preset is not None and error == f"executable not found: {preset.executable}":
        return (
            f"{preset.executable} is not installed (preset {preset.name!r} needs it); "
            f"install it with: {preset.install}"
        )
    return error


def _summary(
    total: int, kept: int, ignored: tuple[int, int, int], process: ProcessOutcome, ok: bool
) -> str:
    status = _status(process.status)
    outside, missing, below = ignored
    parts = []
    if total == 0 and not ok:
        tail = output_tail(process)
        if not (outside or missing):
            return f"{status} without reporting findings" + (f"\n{tail}" if tail else "")
        parts.append(status)
    else:
        parts.append("no findings" if total == 0 else _count(total))
    if kept < total:
        parts.append(f"only the first {kept} are listed")
    if outside:
        parts.append(f"{outside} outside the resource root ignored")
    if missing:
        plural = "s" if missing != 1 else ""
        parts.append(f"{missing} finding{plural} for files not under the root dropped")
    if below:
        parts.append(f"{below} below min_level ignored")
    return "; ".join(parts)


def _count(findings: int) -> str:
    return f"{findings} finding{'s' if findings != 1 else ''}"


def _status(status: int | None) -> str:
    if status is not None and status < 0:
        return f"killed by signal {-status}"
    return f"exit status {status}"


def output_tail(process: ProcessOutcome) -> str:
    """The last lines the command printed (stdout, then stderr)."""
    # Only the ends matter: never split a huge output into lines.
    ends = (part[-_TAIL_CHARS:].rstrip("\n") for part in (process.stdout, process.stderr))
    text = "\n".join(end for end in ends if end.strip())
    tail = "\n".join(text.splitlines()[-_TAIL_LINES:])
    return tail[-_TAIL_CHARS:]
