"""Domain objects of the ACP contract: what the backend talks about.

Conventions on the wire:
- ids are ULID strings; times are ISO-8601 with a timezone;
- paths inside a resource are POSIX-style and relative to its root;
- lines are 0-based; characters are offsets in Unicode code points, so each
  consumer converts to its own unit (LSP: UTF-16 by default) from the text.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

MAX_POSITION = 2**31 - 1
"""The largest line or character LSP can carry (its ``uinteger`` is 2^31 - 1)."""


def _clamp_position(value: object) -> object:
    """Clamp an integer position into ``0..MAX_POSITION``: one absurd number
    from a tool must not make a whole result unreadable (or unpublishable)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return min(max(value, 0), MAX_POSITION)
    return value


Position = Annotated[int, BeforeValidator(_clamp_position), Field(ge=0, le=MAX_POSITION)]
"""A 0-based line, or a character offset in code points; out-of-range values are clamped."""


class Model(BaseModel):
    """Base for everything received: unknown fields are ignored so that an
    older client keeps working against a newer backend."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class Resource(Model):
    """A registered directory the platform may validate and change."""

    id: str
    name: str
    root: str = Field(description="Absolute, normalised path of the resource root.")
    sandbox_roots: tuple[str, ...] = Field(
        default=(), description="Roots of sandboxes (plan work trees) mapping to this resource."
    )
    created_at: datetime


class ValidationMode(StrEnum):
    REQUIRED = "required"
    INFORMATIONAL = "informational"


class SeverityHint(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"


class Location(Model):
    """A range in a file of a resource. Ends are optional (a point finding)."""

    path: str = Field(description="POSIX path relative to the resource root.")
    line: Position
    character: Position = Field(description="Offset in Unicode code points.")
    end_line: Position | None = None
    end_character: Position | None = None

    def covers(self, line: int, character: int | None = None) -> bool:
        """Whether the range holds ``(line, character)`` (any of ``line`` when
        ``character`` is None). Both ends are included, so the cursor just
        after a word is still on it; a point (no end character) holds its
        whole line, as editors show one."""
        end_line = self.line if self.end_line is None else self.end_line
        if self.end_character is None or character is None:
            return self.line <= line <= end_line
        return (self.line, self.character) <= (line, character) <= (end_line, self.end_character)


class TextEdit(Model):
    """Replace the text of a range in one file of the resource (code points)."""

    location: Location = Field(description="The range to replace; a point range inserts.")
    new_text: str


class FindingFix(Model):
    """A fix the tool itself proposed for a finding (SARIF ``fixes``, ruff's)."""

    description: str = ""
    edits: tuple[TextEdit, ...]


class RelatedLocation(Model):
    """Another place that explains a finding (SARIF ``relatedLocations``, code flows)."""

    location: Location
    message: str = ""


class Finding(Model):
    location: Location | None = None
    message: str
    code: str | None = None
    severity: SeverityHint | None = Field(
        default=None, description="The tool's own opinion; the mode decides the LSP severity."
    )
    rule_description: str | None = Field(
        default=None, description="What the rule checks (SARIF ``shortDescription``)."
    )
    help_uri: str | None = Field(default=None, description="Where the rule is documented.")
    related: tuple[RelatedLocation, ...] = ()
    fixes: tuple[FindingFix, ...] = Field(
        default=(), description="Fixes the tool proposed; each can become a one-finding plan."
    )


class ResultOutcome(StrEnum):
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    ERROR = "error"  # the validator could not run (missing executable, bad output)


class ValidationResult(Model):
    id: str
    validation: str
    mode: ValidationMode
    passed: bool
    message: str = ""
    resource_id: str
    plan_id: str | None = None
    run_id: str
    started_at: datetime
    finished_at: datetime
    outcome: ResultOutcome = ResultOutcome.COMPLETED
    findings: tuple[Finding, ...] = ()
    declared_at: Location | None = Field(
        default=None,
        description="Where the validation is declared (its acp.toml line): the anchor "
        "for a result whose findings carry no location.",
    )
    file_hashes: dict[str, str] = Field(
        default_factory=dict,
        description="sha256 of each file named by a finding, as read when the result was "
        "computed; lets a client tell whether a finding is stale.",
    )


class ValidationSpec(Model):
    """A validation a resource declares (in its acp.toml)."""

    name: str
    mode: ValidationMode
    description: str = ""
    applies_to: tuple[str, ...] = ()
    has_fix: bool = False
    declared_at: Location | None = None


class ValidationSummary(Model):
    required_passed: int = 0
    required_failed: int = 0
    informational_passed: int = 0
    informational_failed: int = 0
    cancelled: int = 0


class PlanPhase(StrEnum):
    STRATEGIZE = "strategize"
    EXECUTE = "execute"
    APPLY = "apply"


class PlanState(StrEnum):
    QUEUED = "queued"
    PROCESSING = "processing"
    COMPLETE = "complete"
    ERRORED = "errored"
    APPLIED = "applied"
    CONSTRAINED = "constrained"
    CANCELLED = "cancelled"


class Decision(Model):
    question: str
    chosen: str
    alternatives: tuple[str, ...] = ()
    rationale: str = ""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class Plan(Model):
    id: str
    resource_id: str
    title: str
    description: str = ""
    phase: PlanPhase
    state: PlanState
    created_at: datetime
    updated_at: datetime
    source_validation: str | None = Field(
        default=None, description="The validation whose fix produced this plan, if any."
    )
    paths: tuple[str, ...] = Field(default=(), description="Files the plan changes.")
    decisions: tuple[Decision, ...] = ()
    error: str | None = None


class FileChange(Model):
    path: str
    kind: Literal["modify", "create", "delete"] = "modify"
    base_sha256: str | None = Field(
        default=None, description="Hash of the file as the change expects it; None for create."
    )
    new_text: str | None = Field(default=None, description="Full new content; None for delete.")
    diff: str = Field(default="", description="Unified diff, for display.")


class PlanPreview(Model):
    plan_id: str
    changes: tuple[FileChange, ...]
    hash: str = Field(
        description="Hash over the change set and each file's base content; plan.apply "
        "must quote it back and is refused with CONFLICT if anything moved."
    )


class ContextFinding(Model):
    """A finding of a validation's latest result that covers the inspected position."""

    validation: str
    mode: ValidationMode
    description: str = Field(default="", description="The validation's, from its declaration.")
    passed: bool = Field(description="Whether the result it belongs to passed.")
    finding: Finding = Field(
        description="Rule id (``code``), ``rule_description`` and ``help_uri`` included."
    )
    result_id: str
    run_id: str
    found_at: datetime = Field(description="When the run that produced it finished.")
    fix_available: bool = Field(
        description="The tool proposed a fix, or the validation declares a fix command."
    )
    stale: bool = Field(
        default=False, description="The file has changed since the finding was computed."
    )


class EntityKind(StrEnum):
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"


class Entity(Model):
    """The innermost definition enclosing the position (Python only, for now)."""

    id: str = Field(description="Stable id: ``py:<kind>/<module>.<qualified name>``.")
    kind: EntityKind
    name: str = Field(description="Qualified name inside its module (``Class.method``).")
    signature: str = Field(description="``def f(x: int) -> str``, ``class C(Base)``.")
    doc: str = Field(default="", description="The first line of its docstring.")
    decorators: tuple[str, ...] = ()
    location: Location = Field(description="Its whole range, decorators included.")


class ContextItem(Model):
    """Other context a platform holds about the position (a snippet an agent
    used, a note); the reference backend sends none."""

    title: str
    body: str = ""
    location: Location | None = None


class ContextInfo(Model):
    """What is known about one position, in sections a client shows in this order."""

    resource_id: str
    path: str = Field(description="POSIX path relative to the resource root.")
    line: Position
    character: Position | None = Field(default=None, description="None: the whole line.")
    findings: tuple[ContextFinding, ...] = ()
    entity: Entity | None = None
    items: tuple[ContextItem, ...] = ()
    notes: tuple[str, ...] = Field(
        default=(),
        description="What was not looked at, and why (a binary or too large file, a "
        "syntax error): an empty section is then not a clean bill.",
    )
