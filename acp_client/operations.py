"""Every ACP operation: its parameters, its result, and its A2A aliases.

``OPERATIONS`` is the single table both sides read: the client to type its
calls, the backend to validate what it receives, the schema generator to
document it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from acp_client.models import (
    MAX_POSITION,
    ContextInfo,
    Decision,
    FileEdit,
    Finding,
    FindingRef,
    Model,
    Plan,
    PlanPreview,
    PlanState,
    Resource,
    ValidationResult,
    ValidationSpec,
)

PROTOCOL_VERSION = "1.0"


class Params(BaseModel):
    """Base for everything sent: unknown fields are refused so a typo in a
    parameter name is an INVALID_PARAMS naming it, not a silent no-op.
    Built on first use, as ``Model`` is."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# --- acp.initialize ----------------------------------------------------------


class InitializeParams(Params):
    protocol_version: str = PROTOCOL_VERSION
    client_name: str = "acp-client"
    client_version: str = ""
    capabilities: dict[str, bool] = Field(default_factory=dict)


class InitializeResult(Model):
    protocol_version: str
    server_name: str
    server_version: str
    operations: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    capabilities: dict[str, bool] = Field(default_factory=dict)
    last_event_id: int | None = Field(
        default=None,
        description="The newest event's id when this answer was made (None: the log is "
        "empty). Subscribing after it, before listing anything, misses no event.",
    )


# --- resources ---------------------------------------------------------------


class ResourceListParams(Params):
    pass


class ResourceListResult(Model):
    resources: tuple[Resource, ...]


class ResourceRegisterParams(Params):
    path: str = Field(description="Directory to register (absolute, or a file: URI).")
    name: str | None = Field(default=None, description="Defaults to the directory's name.")


class ResourceUnregisterParams(Params):
    resource: str = Field(description="Resource id or name.")


class ResourceResolveParams(Params):
    path: str = Field(description="An absolute path or a file: URI.")


class ResourceResolveResult(Model):
    resource: Resource
    logical_path: str = Field(description="POSIX path relative to the resource root.")
    sandbox: bool = Field(description="True when the path lies in one of the sandbox roots.")


# --- validations -------------------------------------------------------------


class ValidationListParams(Params):
    resource: str


class ValidationListResult(Model):
    validations: tuple[ValidationSpec, ...]
    config_error: Finding | None = Field(
        default=None,
        description="The declaration file's current problem (located in it), if any; the "
        "validations listed are then the last valid ones.",
    )


class ValidationRunParams(Params):
    resource: str
    validations: tuple[str, ...] | None = Field(
        default=None, description="Names to run; all declared ones when omitted."
    )
    paths: tuple[str, ...] | None = Field(
        default=None,
        description="Files that changed (relative or absolute); validators whose applies_to "
        "matches none of them are skipped.",
    )
    plan: str | None = Field(default=None, description="Validate a plan's sandbox instead.")


class ValidationRunResult(Model):
    run_id: str
    validations: tuple[str, ...]
    started_event_id: int | None = Field(
        default=None,
        description="Id of the run's validation.started event: subscribing after "
        "started_event_id - 1 sees every event of the run, however fast it ends.",
    )


class ValidationCancelParams(Params):
    run_id: str


class ValidationCancelResult(Model):
    run_id: str
    cancelled: tuple[str, ...] = Field(description="Validations that were still running.")


class ValidationListResultsParams(Params):
    resource: str
    plan: str | None = None
    after: str | None = Field(default=None, description="Cursor from a previous page.")
    history: bool = Field(default=False, description="Every result, not just the latest.")
    limit: int = Field(default=200, ge=1, le=1000)


class ValidationListResultsResult(Model):
    results: tuple[ValidationResult, ...]
    next_cursor: str | None = None


class ValidationSchemaParams(Params):
    resource: str | None = Field(
        default=None,
        description="Resource id or name: look tools up on PATH as that resource's "
        "validators run (their env's PATH, relative entries from their cwd).",
    )


class ConfigField(Model):
    """One key of a ``[[validations]]`` table (or of a table inside one)."""

    name: str
    type: str = Field(
        description="string, boolean, integer, number, enumeration, table, array of strings, "
        "array of integers: what the key is usually given."
    )
    also_accepts: tuple[str, ...] = Field(
        default=(), description="Other types the key takes (``command``: a string with shell)."
    )
    values: tuple[str, ...] = Field(
        default=(), description="The allowed values of an enumeration (of a table's values)."
    )
    default: JsonValue = Field(
        default=None, description="Its value when left out (None: none, or not set)."
    )
    required: bool = Field(
        default=False,
        description="Required in every table (``mode`` and ``name`` are given by a preset).",
    )
    doc: str = Field(default="", description="One line: what it does.")
    fields: tuple[ConfigField, ...] = Field(
        default=(), description="The keys of a table with fixed keys (``mapping``, ``suppress``)."
    )


class PresetInfo(Model):
    """A tool ``preset = NAME`` stands for."""

    name: str
    summary: str
    fields: dict[str, JsonValue] = Field(
        description="What it fills in, as written in acp.toml (the table's own keys win)."
    )
    executable: str = Field(description="The program it runs.")
    on_path: bool = Field(description="Whether the executable is found on PATH now.")
    found_at: str | None = Field(default=None, description="Where it was found.")
    install: str = Field(description="How to install it.")


class ConfigChoice(Model):
    """One value of an enumeration, explained."""

    name: str
    doc: str


class ValidationSchemaResult(Model):
    fields: tuple[ConfigField, ...] = Field(
        description="Every key a [[validations]] table accepts, in the declaration's order."
    )
    presets: tuple[PresetInfo, ...]
    formats: tuple[ConfigChoice, ...] = Field(description="The values of ``format``.")
    column_units: tuple[ConfigChoice, ...] = Field(description="The values of ``columns``.")


# --- plans -------------------------------------------------------------------


class PlanListParams(Params):
    resource: str | None = None
    states: tuple[PlanState, ...] | None = None


class PlanListResult(Model):
    plans: tuple[Plan, ...]


class PlanRef(Params):
    plan_id: str


class PlanCreateParams(Params):
    """Submit a change set: exactly one of ``diff``, ``files`` or ``findings``."""

    resource: str
    title: str | None = Field(
        default=None, description="Required with diff/files; from the fixes with findings."
    )
    description: str = ""
    author: str = ""
    diff: str | None = Field(
        default=None,
        description="A unified diff as git diff writes it (new, deleted, renamed files, "
        "'\\ No newline at end of file'), paths relative to the resource root.",
    )
    files: tuple[FileEdit, ...] | None = Field(
        default=None, description="The change set as per-file edits."
    )
    findings: tuple[FindingRef, ...] | None = Field(
        default=None,
        description="Fixes that tools attached to findings; one ref makes a one-finding "
        "plan. A fix overlapping an earlier one is skipped and recorded as a decision.",
    )
    decisions: tuple[Decision, ...] = ()

    @model_validator(mode="after")
    def _one_source(self) -> PlanCreateParams:
        given = [name for name in ("diff", "files", "findings") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of diff, files or findings")
        if self.findings is None and not (self.title or "").strip():
            raise ValueError("title is required with diff or files")
        return self


class PlanExecuteParams(Params):
    resource: str
    validation: str = Field(
        description="Propose a fix: run this validation's fix command in a sandbox."
    )
    title: str | None = None
    description: str = ""
    paths: tuple[str, ...] | None = Field(
        default=None, description="Files the fix is about (for the title and the re-run)."
    )


class PlanApplyParams(Params):
    plan_id: str
    expected_hash: str = Field(description="The plan_hash plan.preview returned.")
    force: bool = Field(
        default=False, description="Apply a constrained plan anyway; recorded on the plan."
    )
    applied_by_client: bool = Field(
        default=False,
        description="The client already applied the change set to its buffers (LSP "
        "workspace/applyEdit): the backend writes nothing, checks each target holds its "
        "base or its new content, and records the plan in_editor until plan.settle finds "
        "its change on disk (applied) or gone from the buffers (back to what it was).",
    )


class PlanSettleParams(Params):
    plan_id: str
    in_buffers: bool = Field(
        description="Whether the client's buffers still hold the plan's change (false: "
        "undone, or closed without saving)."
    )


# --- context -----------------------------------------------------------------


MAX_INSPECT_TEXT = 2_000_000
"""The most code points of ``text`` ``context.inspect`` accepts (and the most
bytes of a file on disk it reads): beyond, it answers without reading."""


class ContextInspectParams(Params):
    path: str = Field(
        description="An absolute path or a file: URI; with ``resource``, a path relative "
        "to its root is accepted too."
    )
    resource: str | None = Field(default=None, description="Resource id or name.")
    line: int = Field(ge=0, le=MAX_POSITION, description="0-based.")
    character: int | None = Field(
        default=None,
        ge=0,
        le=MAX_POSITION,
        description="Unicode code points; None: the whole line (what a client caches per line).",
    )
    text: str | None = Field(
        default=None,
        max_length=MAX_INSPECT_TEXT,
        description="The file as the client holds it (unsaved edits), to read instead of the disk.",
    )


@dataclass(frozen=True)
class Operation:
    method: str
    params: type[Params]
    result: type[BaseModel]
    mutates: bool
    summary: str


OPERATIONS: dict[str, Operation] = {
    op.method: op
    for op in (
        Operation(
            "acp.initialize",
            InitializeParams,
            InitializeResult,
            False,
            "Negotiate the protocol version and capabilities.",
        ),
        Operation(
            "resource.list",
            ResourceListParams,
            ResourceListResult,
            False,
            "List registered resources.",
        ),
        Operation(
            "resource.register",
            ResourceRegisterParams,
            Resource,
            True,
            "Register a directory as a resource.",
        ),
        Operation(
            "resource.unregister",
            ResourceUnregisterParams,
            Resource,
            True,
            "Forget a resource (its files are untouched).",
        ),
        Operation(
            "resource.resolve",
            ResourceResolveParams,
            ResourceResolveResult,
            False,
            "Map a path or file URI to the resource that contains it.",
        ),
        Operation(
            "validation.list",
            ValidationListParams,
            ValidationListResult,
            False,
            "List the validations a resource declares.",
        ),
        Operation(
            "validation.schema",
            ValidationSchemaParams,
            ValidationSchemaResult,
            False,
            "What an acp.toml may declare: its fields, the presets, formats and column units.",
        ),
        Operation(
            "validation.run",
            ValidationRunParams,
            ValidationRunResult,
            False,
            "Start a validation run; results arrive as events.",
        ),
        Operation(
            "validation.cancel",
            ValidationCancelParams,
            ValidationCancelResult,
            False,
            "Cancel a running validation run.",
        ),
        Operation(
            "validation.list_results",
            ValidationListResultsParams,
            ValidationListResultsResult,
            False,
            "Latest (or all) results, paginated.",
        ),
        Operation("plan.list", PlanListParams, PlanListResult, False, "List plans."),
        Operation("plan.get", PlanRef, Plan, False, "One plan with its decisions."),
        Operation(
            "plan.create",
            PlanCreateParams,
            Plan,
            True,
            "Submit a plan: a unified diff, file edits, or the fixes tools attached to findings.",
        ),
        Operation(
            "plan.execute",
            PlanExecuteParams,
            Plan,
            True,
            "Propose a fix: run a validation's fix command in a sandbox (completes in events).",
        ),
        Operation(
            "plan.preview", PlanRef, PlanPreview, False, "The plan's change set and its guard hash."
        ),
        Operation(
            "plan.apply",
            PlanApplyParams,
            Plan,
            True,
            "Apply a previewed plan, all or nothing, guarded by its hash.",
        ),
        Operation(
            "plan.settle",
            PlanSettleParams,
            Plan,
            True,
            "Record where an in_editor plan stands: applied once its change is on disk, "
            "back to what it was once undone.",
        ),
        Operation("plan.cancel", PlanRef, Plan, True, "Cancel a plan that has not ended yet."),
        Operation(
            "context.inspect",
            ContextInspectParams,
            ContextInfo,
            False,
            "What the platform knows about a position: provenance, findings, entity.",
        ),
    )
}

# CleverAgents A2A extension names that mean the same as one of ours.
ALIASES: dict[str, str] = {
    "_cleveragents/initialize": "acp.initialize",
    "_cleveragents/registry/resources/list": "resource.list",
    "_cleveragents/registry/resources/register": "resource.register",
    "_cleveragents/registry/resources/resolve": "resource.resolve",
    "_cleveragents/validation/run": "validation.run",
    "_cleveragents/validation/cancel": "validation.cancel",
    "_cleveragents/validation/results": "validation.list_results",
    "_cleveragents/plan/list": "plan.list",
    "_cleveragents/plan/status": "plan.get",
    "_cleveragents/plan/create": "plan.create",
    "_cleveragents/plan/execute": "plan.execute",
    "_cleveragents/plan/preview": "plan.preview",
    "_cleveragents/plan/apply": "plan.apply",
    "_cleveragents/plan/cancel": "plan.cancel",
    "_cleveragents/context/inspect": "context.inspect",
}


def canonical_method(method: str) -> str:
    """Our name for ``method`` (itself when it is not an alias)."""
    return ALIASES.get(method, method)


def alias_for(method: str) -> str | None:
    """The A2A name of one of our methods, if it has one."""
    for alias, canonical in ALIASES.items():
        if canonical == method:
            return alias
    return None


def version_compatible(ours: str, theirs: str) -> bool:
    """Same major version speaks the same wire; minors only add."""
    return ours.split(".", 1)[0] == theirs.split(".", 1)[0]
