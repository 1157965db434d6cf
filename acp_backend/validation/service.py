"""``validation.*``: thin handlers over acp.toml, the runs and the store."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

from acp_backend.limits import validation_concurrency
from acp_backend.plans.records import sandbox_root_of
from acp_backend.services import Services
from acp_backend.validation import fork_server
from acp_backend.validation.config import ConfigCache, ConfigError, ValidationConfig
from acp_backend.validation.runs import ValidationRuns
from acp_backend.validation.schema import validation_schema
from acp_backend.validation.selection import logical_path, select_validations
from acp_backend.validation.validator import RunScope
from acp_client.errors import NotFound
from acp_client.models import (
    Finding,
    Location,
    Resource,
    ResultOutcome,
    SeverityHint,
    ValidationResult,
)
from acp_client.operations import (
    ValidationCancelParams,
    ValidationCancelResult,
    ValidationListParams,
    ValidationListResult,
    ValidationRunParams,
    ValidationRunResult,
    ValidationSchemaParams,
    ValidationSchemaResult,
)
from acp_client.paths import CONFIG_FILE


class ValidationService:
    """The backend's validation state: parsed acp.toml files and running validations."""

    def __init__(self, services: Services) -> None:
        self.configs = ConfigCache()
        self._store = services.store
        fork_server.warm_up()  # the process that will read validators' output
        # Each validation's latest completed result per resource: what a run
        # on some files is merged into (reading it back from the store would
        # cost more than the run itself on a large repository).
        self.baselines: dict[tuple[str, str], ValidationResult] = {}
        self.runs = ValidationRuns(
            events=services.events,
            save=self._save,
            tasks=services.tasks,
            concurrency=validation_concurrency(),
        )

    def _save(self, result: ValidationResult, along: Callable[[sqlite3.Connection], None]) -> None:
        self._store.insert_result(result, along)
        if result.plan_id is None and result.outcome is ResultOutcome.COMPLETED:
            self.baselines[result.resource_id, result.validation] = result

    def baselines_for(
        self, resource_id: str, configs: tuple[ValidationConfig, ...]
    ) -> dict[str, ValidationResult]:
        """The baselines of ``configs``; from the store for those not seen since start."""
        names = [config.name for config in configs]
        if any((resource_id, name) not in self.baselines for name in names):
            latest, _ = self._store.latest_results(resource_id, limit=1000)
            for result in latest:
                if result.outcome is ResultOutcome.COMPLETED:
                    self.baselines.setdefault((resource_id, result.validation), result)
        return {
            name: self.baselines[resource_id, name]
            for name in names
            if (resource_id, name) in self.baselines
        }


def _service(services: Services) -> ValidationService:
    return services.service(ValidationService, ValidationService)


def prepare(services: Services) -> None:
    """A served backend starts its parse server with it: made on the first
    run, its interpreter's start (~0.1 s of CPU) landed in the first burst of
    runs and delayed every event of it to every subscriber."""
    _service(services)


def config_finding(error: ConfigError | None) -> Finding | None:
    if error is None:
        return None
    return Finding(
        location=Location(path=CONFIG_FILE, line=error.line - 1, character=0),
        message=str(error),
        severity=SeverityHint.ERROR,
    )


async def list_validations(
    services: Services, params: ValidationListParams
) -> ValidationListResult:
    resource = services.registry.get(params.resource)
    loaded = _service(services).configs.get(Path(resource.root))
    return ValidationListResult(
        validations=tuple(config.spec() for config in loaded.validations),
        config_error=config_finding(loaded.error),
    )


async def schema(services: Services, params: ValidationSchemaParams) -> ValidationSchemaResult:
    if params.resource is None:
        return await asyncio.to_thread(validation_schema)
    resource = services.registry.get(params.resource)
    root = Path(resource.root)
    # The declarations in force (the last valid ones while acp.toml is broken).
    declared = _service(services).configs.get(root).validations
    return await asyncio.to_thread(validation_schema, root, declared)


async def run(services: Services, params: ValidationRunParams) -> ValidationRunResult:
    resource = services.registry.get(params.resource)
    root = resource.root
    if params.plan is not None:  # the plan's sandbox, with the resource's validations
        root = sandbox_root_of(services.store, params.plan, resource.id)
    service = _service(services)
    loaded = service.configs.get(Path(resource.root))
    selected = select_validations(loaded, resource.root, params.validations, params.paths)
    # A plan's sandbox is validated whole; a save on the resource may run
    # ``{files}`` validations on the saved files only.
    scope = (
        RunScope() if params.plan is not None else run_scope(services, resource, selected, params)
    )
    started = await service.runs.start(
        resource.id, Path(root), selected, plan_id=params.plan, scope=scope
    )
    return ValidationRunResult(
        run_id=started.run_id,
        validations=started.validations,
        started_event_id=started.started_event_id,
    )


def run_scope(
    services: Services,
    resource: Resource,
    selected: tuple[ValidationConfig, ...],
    params: ValidationRunParams,
) -> RunScope:
    """A save (changed paths given) runs ``{files}`` validations on those files
    only, merged into each one's latest result; anything else is a full run."""
    scoped = tuple(config for config in selected if config.uses_files)
    if params.paths is None or not scoped:
        return RunScope()
    paths = tuple(logical_path(path, resource.root) for path in params.paths)
    return RunScope(paths, _service(services).baselines_for(resource.id, scoped))


async def cancel(services: Services, params: ValidationCancelParams) -> ValidationCancelResult:
    cancelled = await _service(services).runs.cancel(params.run_id)
    if cancelled is None:  # finished already (results stored), or never existed
        known = services.store.query(
            "SELECT 1 FROM validation_results WHERE run_id = ? LIMIT 1", (params.run_id,)
        )
        if not known:
            raise NotFound(f"no validation run {params.run_id!r}")
        cancelled = ()
    return ValidationCancelResult(run_id=params.run_id, cancelled=cancelled)
