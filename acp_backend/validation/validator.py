"""One validation, one result: run the command, read its output, judge it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from acp_backend.ids import new_ulid
from acp_backend.validation.config import OutputFormat, ValidationConfig
from acp_backend.validation.locations import FindingConverter
from acp_backend.validation.parsers import parse_output
from acp_backend.validation.raw import OutputError
from acp_backend.validation.runner import OUTPUT_CAP, Ending, ProcessOutcome, run_command
from acp_client.models import Finding, ResultOutcome, ValidationResult

MAX_FINDINGS = 10_000  # per result: beyond this an editor shows noise, not information
_TAIL_LINES = 10
_TAIL_CHARS = 2000


@dataclass(frozen=True)
class RunTarget:
    """Where a run happens: a resource's root, or a plan's sandbox of it."""

    resource_id: str
    root: Path
    run_id: str
    plan_id: str | None = None


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str
    outcome: ResultOutcome = ResultOutcome.COMPLETED
    findings: tuple[Finding, ...] = ()
    file_hashes: dict[str, str] = field(default_factory=dict)


async def run_validation(
    config: ValidationConfig,
    target: RunTarget,
    *,
    output_cap: int = OUTPUT_CAP,
    max_findings: int = MAX_FINDINGS,
) -> ValidationResult:
    started = datetime.now(UTC)
    process = await run_command(
        config.command,
        cwd=target.root,
        time_limit=config.timeout,
        shell=config.shell,
        output_cap=output_cap,
    )
    # Parsing a large output is CPU work: keep the event loop free meanwhile.
    verdict = await asyncio.to_thread(judge, config, process, target.root, max_findings)
    return make_result(config, target, started, verdict)


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
    config: ValidationConfig, process: ProcessOutcome, root: Path, max_findings: int = MAX_FINDINGS
) -> Verdict:
    """Passed means: the command exited 0 and reported no findings."""
    if process.ending is Ending.NOT_STARTED:
        return Verdict(False, process.error, ResultOutcome.ERROR)
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
    if config.format is OutputFormat.EXIT_CODE:
        tail = output_tail(process)
        return Verdict(process.status == 0, f"{status}\n{tail}" if tail else status)
    converter = FindingConverter(str(root))
    findings: list[Finding] = []
    total = 0
    try:
        for raw in parse_output(config, process.stdout, process.stderr):
            if converter.admits(raw):
                total += 1
                if len(findings) < max_findings:
                    findings.append(converter.convert(raw))
    except OutputError as exc:
        message = f"{exc} ({status})"
        tail = output_tail(process)
        return Verdict(False, f"{message}\n{tail}" if tail else message, ResultOutcome.ERROR)
    passed = total == 0 and process.status == 0
    return Verdict(
        passed,
        _summary(total, len(findings), converter.dropped, process, status),
        findings=tuple(findings),
        file_hashes=converter.file_hashes,
    )


def _summary(total: int, kept: int, dropped: int, process: ProcessOutcome, status: str) -> str:
    if total == 0 and process.status != 0:
        tail = output_tail(process)
        return f"{status} without reporting findings" + (f"\n{tail}" if tail else "")
    parts = ["no findings" if total == 0 else f"{total} finding{'s' if total != 1 else ''}"]
    if kept < total:
        parts.append(f"only the first {kept} are listed")
    if dropped:
        parts.append(f"{dropped} outside the resource root ignored")
    return "; ".join(parts)


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
