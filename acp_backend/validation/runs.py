"""Validation runs: validators in parallel, results as they land, cancel and supersede.

A run is one supervisor task over one job task per validation, all owned by
the backend's ``TaskSet``. Jobs share a semaphore, so at most ``concurrency``
validators run at once across all runs. Each job's result is published the
moment it finishes (completion order); a cancelled job becomes a result with
outcome ``cancelled``, one the store refuses a result with outcome ``error``.
Starting a validation for a resource (or plan) where the same validation is
still running cancels the older job: saves in quick succession never pile up
processes.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from acp_backend.eventlog import EventLog
from acp_backend.ids import new_ulid
from acp_backend.services import TaskSet
from acp_backend.validation.config import ValidationConfig
from acp_backend.validation.runner import OUTPUT_CAP
from acp_backend.validation.validator import (
    MAX_FINDINGS,
    Ran,
    RunScope,
    RunTarget,
    Verdict,
    make_result,
    run_scoped,
)
from acp_client.events import ValidationCompleted, ValidationResultEvent, ValidationStarted
from acp_client.models import ResultOutcome, ValidationMode, ValidationResult, ValidationSummary

log = logging.getLogger(__name__)

_Key = tuple[str, str | None, str]  # resource id, plan id, validation name


@dataclass
class _Run:
    target: RunTarget
    configs: dict[str, ValidationConfig]
    jobs: dict[str, asyncio.Task[Ran]] = field(default_factory=dict)
    started_at: dict[str, datetime] = field(default_factory=dict)
    why_cancelled: dict[str, str] = field(default_factory=dict)
    # Set once the run's start is recorded (or could not be: ``abandoned``);
    # no result of the run is recorded before it.
    announced: asyncio.Event = field(default_factory=asyncio.Event)
    abandoned: bool = False


@dataclass(frozen=True)
class StartedRun:
    run_id: str
    validations: tuple[str, ...]
    started_event_id: int


class ValidationRuns:
    def __init__(
        self,
        *,
        events: EventLog,
        save: Callable[[ValidationResult, Callable[[sqlite3.Connection], None]], None],
        tasks: TaskSet,
        concurrency: int,
        output_cap: int = OUTPUT_CAP,
        max_findings: int = MAX_FINDINGS,
    ) -> None:
        self._events = events
        self._save = save
        self._tasks = tasks
        self._slots = asyncio.Semaphore(concurrency)
        self._output_cap = output_cap
        self._max_findings = max_findings
        self._runs: dict[str, _Run] = {}
        self._running: dict[_Key, tuple[_Run, asyncio.Task[Ran]]] = {}

    async def start(
        self,
        resource_id: str,
        root: Path,
        configs: Sequence[ValidationConfig],
        plan_id: str | None = None,
        scope: RunScope | None = None,
    ) -> StartedRun:
        """Start the validators, then record that the run started, and return;
        events report the rest. The validators' processes start first: the
        start's commit (~0.5 ms) then overlaps them rather than delaying every
        save's diagnostics by as much."""
        scope = scope or RunScope()
        target = RunTarget(resource_id, root, new_ulid(), plan_id, scope.paths, scope.previous)
        run = _Run(target, {config.name: config for config in configs})
        self._runs[target.run_id] = run
        self._tasks.spawn(self._supervise(run), name=f"validation run {target.run_id}")
        for name, config in run.configs.items():
            key = (resource_id, plan_id, name)
            previous = self._running.get(key)
            if previous is not None:
                older_run, older_job = previous
                older_run.why_cancelled[name] = f"superseded by run {target.run_id}"
                older_job.cancel()
            # Owned by the backend too, so a shutdown kills its processes even if
            # the supervisor is cancelled before it ever ran.
            job = self._tasks.spawn(
                self._job(run, config), name=f"validation {name} of run {target.run_id}"
            )
            run.jobs[name] = job
            self._running[key] = (run, job)
        try:
            await asyncio.sleep(0)  # each job runs up to its process's start
            started = self._events.publish(
                ValidationStarted,
                run_id=target.run_id,
                resource_id=resource_id,
                plan_id=plan_id,
                validations=tuple(run.configs),
            )
        except BaseException:  # unrecorded: as if it never started
            run.abandoned = True
            for job in run.jobs.values():
                job.cancel()
            raise
        finally:
            run.announced.set()
        return StartedRun(target.run_id, tuple(run.configs), started.event_id)

    async def cancel(self, run_id: str) -> tuple[str, ...] | None:
        """Cancel what is still running or queued in a run; returns once its
        processes are dead. Names the validations that were cancelled; None
        when no such run is in progress."""
        run = self._runs.get(run_id)
        if run is None:
            return None
        unfinished = {name: job for name, job in run.jobs.items() if not job.done()}
        for name, job in unfinished.items():
            run.why_cancelled.setdefault(name, "cancelled by request")
            job.cancel()
        await asyncio.gather(*unfinished.values(), return_exceptions=True)
        return tuple(unfinished)

    async def _job(self, run: _Run, config: ValidationConfig) -> Ran:
        async with self._slots:
            run.started_at[config.name] = datetime.now(UTC)
            return await run_scoped(config, run.target, self._output_cap, self._max_findings)

    async def _supervise(self, run: _Run) -> None:
        finished: asyncio.Queue[str] = asyncio.Queue()
        for name, job in run.jobs.items():
            job.add_done_callback(partial(_announce, finished, name))
        summary = _Tally()
        try:
            await run.announced.wait()
            if run.abandoned:
                await self._abandon(run)
                return
            for _ in range(len(run.jobs)):
                summary.add(await self._record(run, await finished.get()))
            # One turn of the loop first: what the last result's event woke (in
            # local mode, the editor's publish) goes before this write of the
            # run's end, ~0.2 ms sooner on every save (bench_budget.py).
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            # The backend is shutting down: stop the jobs, record them, end the run.
            for name, job in run.jobs.items():
                run.why_cancelled.setdefault(name, "the backend shut down")
                job.cancel()
            await asyncio.gather(*run.jobs.values(), return_exceptions=True)
            while not finished.empty():
                summary.add(await self._record(run, finished.get_nowait()))
            self._complete(run, summary)
            raise
        self._complete(run, summary)

    async def _abandon(self, run: _Run) -> None:
        """A run whose start could not be recorded: its jobs end, nothing of it is."""
        await asyncio.gather(*run.jobs.values(), return_exceptions=True)
        self._runs.pop(run.target.run_id, None)
        for name in run.jobs:
            self._release(run, name)

    def _release(self, run: _Run, name: str) -> None:
        """Forget ``name``'s job of ``run`` as the one running (unless a newer run's is)."""
        key = (run.target.resource_id, run.target.plan_id, name)
        if self._running.get(key, (None, None))[1] is run.jobs[name]:
            del self._running[key]

    async def _record(self, run: _Run, name: str) -> ValidationResult:
        """Store and announce a job's result. One that cannot be stored (a
        full disk, text SQLite refuses) becomes an ``unrecorded`` result
        saying so, which is what the summary counts: never a silent loss.
        The writes run on a thread: a 10,000-finding result, with the WAL
        checkpoint it may set off, held the event loop for up to 75 ms."""
        job = run.jobs[name]
        self._release(run, name)
        ran = self._result_of(run, name, job)
        result = ran.result
        try:
            await asyncio.to_thread(self._store, ran)
        except Exception as exc:
            log.exception("could not record the result of %s in run %s", name, run.target.run_id)
            message = f"its result could not be stored: {exc or type(exc).__name__}"
            verdict = Verdict(False, message, ResultOutcome.UNRECORDED)
            result = make_result(run.configs[name], run.target, result.started_at, verdict)
            try:
                await asyncio.to_thread(self._store, Ran(result))
            except Exception:  # the summary still counts it; the store is failing
                log.exception("could not record that either")
        return result

    def _store(self, ran: Ran) -> None:
        """The whole result is stored; the event carries what the run covered.
        Both commit together (one transaction): a stored result always has
        its event, and a save's result costs one commit, not two."""
        event = self._events.prepare(ValidationResultEvent, **ran.event_fields())
        self._save(ran.result, event.write)
        event.announce()

    def _result_of(self, run: _Run, name: str, job: asyncio.Task[Ran]) -> Ran:
        config = run.configs[name]
        started = run.started_at.get(name, datetime.now(UTC))
        if job.cancelled():
            reason = run.why_cancelled.get(name, "cancelled")
            verdict = Verdict(False, reason, ResultOutcome.CANCELLED)
            return Ran(make_result(config, run.target, started, verdict))
        error = job.exception()
        if error is None:
            return job.result()
        # The TaskSet has logged the traceback.
        verdict = Verdict(False, f"internal error: {error}", ResultOutcome.ERROR)
        return Ran(make_result(config, run.target, started, verdict))

    def _complete(self, run: _Run, tally: _Tally) -> None:
        self._runs.pop(run.target.run_id, None)
        try:
            self._events.publish(
                ValidationCompleted,
                run_id=run.target.run_id,
                resource_id=run.target.resource_id,
                plan_id=run.target.plan_id,
                summary=tally.summary(),
            )
        except Exception:
            log.exception("could not publish the completion of run %s", run.target.run_id)


def _announce(finished: asyncio.Queue[str], name: str, _: object) -> None:
    finished.put_nowait(name)


class _Tally:
    def __init__(self) -> None:
        self.counts = dict.fromkeys(ValidationSummary.model_fields, 0)

    def add(self, result: ValidationResult) -> None:
        if result.outcome is ResultOutcome.CANCELLED:
            key = "cancelled"
        else:
            mode = "required" if result.mode is ValidationMode.REQUIRED else "informational"
            key = f"{mode}_{'passed' if result.passed else 'failed'}"
        self.counts[key] += 1

    def summary(self) -> ValidationSummary:
        return ValidationSummary(**self.counts)
