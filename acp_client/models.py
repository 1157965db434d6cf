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
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    WithJsonSchema,
)
from pydantic.dataclasses import dataclass

from acp_client.jail import why_refused

MAX_POSITION = 2**31 - 1
"""The largest line or character LSP can carry (its ``uinteger`` is 2^31 - 1)."""


def _clamp_position(value: object) -> object:
    """Clamp an integer position into ``0..MAX_POSITION``: one absurd number
    from a tool must not make a whole result unreadable (or unpublishable)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return min(max(value, 0), MAX_POSITION)
    return value


Position = Annotated[
    Annotated[int, Field(ge=0, le=MAX_POSITION)]
    | Annotated[int, BeforeValidator(_clamp_position), Field(ge=0, le=MAX_POSITION)],
    Field(union_mode="left_to_right"),
    WithJsonSchema({"ge": 0, "le": MAX_POSITION, "type": "integer"}),
]
"""A 0-based line, or a character offset in code points; out-of-range values
are clamped. A number in range is checked in pydantic's core alone: calling
the clamp for every position of 10,000 findings took two thirds of reading them."""


class Model(BaseModel):
    """Base for everything received: unknown fields are ignored so that an
    older client keeps working against a newer backend. A model's validator
    is built on its first use: a process that reads results never uses most
    of the contract's ~60 models (~10 ms of ``check --no-run``)."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


_HELD = ConfigDict(extra="ignore")
"""For what a client holds by the hundred thousand (a finding and its
places): frozen slotted pydantic dataclasses, validated like a ``Model``
but ~180 bytes with the message rather than ~2 KB (no ``__dict__``, no
fields-set per instance; ADR 0019). ``dataclasses.replace`` copies one."""


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


@dataclass(frozen=True, slots=True, kw_only=True, config=_HELD)
class Location:
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


@dataclass(frozen=True, slots=True, kw_only=True, config=_HELD)
class TextEdit:
    """Replace the text of a range in one file of the resource (code points)."""

    location: Location = Field(description="The range to replace; a point range inserts.")
    new_text: str


class FixApplicability(StrEnum):
    """How safe the tool says its fix is (ruff's words; a tool that says
    nothing: safe). Only safe fixes are applied in bulk unless the user opts
    in; display-only ones never are."""

    SAFE = "safe"
    UNSAFE = "unsafe"  # may change what the code does: the tool applies it only when asked
    DISPLAY_ONLY = "display-only"  # shown for reference, never applied by the tool


@dataclass(frozen=True, slots=True, kw_only=True, config=_HELD)
class FindingFix:
    """A fix the tool itself proposed for a finding (SARIF ``fixes``, ruff's)."""

    description: str = ""
    edits: tuple[TextEdit, ...]
    applicability: FixApplicability = Field(
        default=FixApplicability.SAFE,
        description="How safe the tool says the fix is; bulk fixing takes only safe ones "
        "unless the user opts in to unsafe ones, never display-only ones.",
    )


@dataclass(frozen=True, slots=True, kw_only=True, config=_HELD)
class RelatedLocation:
    """Another place that explains a finding (SARIF ``relatedLocations``, code flows)."""

    location: Location
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True, config=_HELD)
class Finding:
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


FINDINGS: TypeAdapter[tuple[Finding, ...]] = TypeAdapter(tuple[Finding, ...])
"""Reads or writes many findings in one call (a finding is a dataclass, not
a model: no ``model_validate`` of its own)."""


class ResultOutcome(StrEnum):
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    ERROR = "error"  # the validator could not run (missing executable, bad output)
    UNRECORDED = "unrecorded"  # the backend could not store its result (e.g. a full disk)


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


class SuppressPlace(StrEnum):
    LINE = "line"  # at the end of the finding's line
    LINE_ABOVE = "line_above"  # a line of its own above it, indented like it


CODES_PLACEHOLDER = "{codes}"
CODE_PLACEHOLDER = "{code}"


class SuppressSpec(Model):
    """How the validation's tool silences one finding with a comment in the file."""

    comment: str = Field(
        description="The whole comment, with ``{codes}`` (once) where the codes go: "
        "``# noqa: {codes}``, ``// eslint-disable-next-line {codes}``."
    )
    where: SuppressPlace = Field(
        default=SuppressPlace.LINE,
        description="``line``: at the end of the finding's line; ``line_above``: a line of "
        "its own above it, indented like it.",
    )
    separator: str = Field(
        default=", ",
        description="Joins codes in one comment; a comment already there is extended with "
        "it (``# noqa: E501, F401``), never written twice.",
    )
    code: str = Field(
        default=CODE_PLACEHOLDER,
        description="How each code is written, with ``{code}`` for the finding's code "
        "(``rule:{code}`` for yamllint).",
    )
    first: bool = Field(
        default=False,
        description="The tool reads the comment only as the line's first comment (mypy's "
        "``# type: ignore``): write it before any comment already on the line.",
    )

    def render(self, codes: tuple[str, ...] | list[str]) -> str:
        """The comment silencing ``codes``: ``# noqa: E501, F401``."""
        written = self.separator.join(self.code.replace(CODE_PLACEHOLDER, c) for c in codes)
        return self.comment.replace(CODES_PLACEHOLDER, written)


class ValidationSpec(Model):
    """A validation a resource declares (in its acp.toml)."""

    name: str
    mode: ValidationMode
    description: str = ""
    applies_to: tuple[str, ...] = ()
    has_fix: bool = False
    declared_at: Location | None = None
    suppress: SuppressSpec | None = Field(
        default=None,
        description="The comment that silences one of its findings in the file (from its "
        "preset or its own ``suppress``); None: its tool has none that we know of.",
    )


class ValidationSummary(Model):
    required_passed: int = 0
    required_failed: int = 0
    informational_passed: int = 0
    informational_failed: int = 0
    cancelled: int = 0


class PlanPhase(StrEnum):
    STRATEGIZE = "strategize"  # the change set is being worked out
    EXECUTE = "execute"  # a fix command runs / validations run in the sandbox
    APPLY = "apply"  # the change set is ready for, or reached, the real resource


class PlanState(StrEnum):
    QUEUED = "queued"
    PROCESSING = "processing"
    COMPLETE = "complete"  # ready to preview and apply
    ERRORED = "errored"
    APPLIED = "applied"
    CONSTRAINED = "constrained"  # it makes a required validation worse (``reason``)
    CANCELLED = "cancelled"
    IN_EDITOR = "in_editor"  # applied in an editor's buffers, not saved yet (plan.settle)
    EXPIRED = "expired"  # ready too long unapplied: its sandbox was removed


TERMINAL_PLAN_STATES = frozenset(
    {PlanState.ERRORED, PlanState.APPLIED, PlanState.CANCELLED, PlanState.EXPIRED}
)
"""States a plan never leaves."""
OPEN_PLAN_STATES = frozenset(PlanState) - TERMINAL_PLAN_STATES
"""A plan that has not ended: it can still be cancelled."""
APPLIABLE_PLAN_STATES = frozenset({PlanState.COMPLETE, PlanState.CONSTRAINED})
"""A plan whose change set is ready: it can be previewed and applied (a
constrained one only with ``force``; ``acp_client.appliable`` says why not)."""
WORKING_PLAN_STATES = frozenset({PlanState.QUEUED, PlanState.PROCESSING})
"""A plan still being worked out."""


class PlanOrigin(StrEnum):
    SUBMITTED = "submitted"  # plan.create with a diff or file edits (an agent, a tool)
    VALIDATION_FIX = "validation_fix"  # plan.execute ran a validation's fix command
    FINDING_FIX = "finding_fix"  # plan.create from the fixes tools attached to findings


class Decision(Model):
    """One decision of the plan's trail, as CleverAgents records them."""

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
    author: str = ""
    origin: PlanOrigin = PlanOrigin.SUBMITTED
    phase: PlanPhase
    state: PlanState
    created_at: datetime
    updated_at: datetime
    source_validation: str | None = Field(
        default=None, description="The validation whose fix produced this plan, if any."
    )
    paths: tuple[str, ...] = Field(
        default=(), description="Files the plan changes (both names of a rename)."
    )
    decisions: tuple[Decision, ...] = ()
    reason: str | None = Field(
        default=None,
        description="Why the plan is errored, constrained or cancelled, in words to act on.",
    )
    sandbox_root: str | None = Field(
        default=None,
        description="Absolute root of the plan's sandbox while it exists; its files resolve "
        "to the plan's resource with sandbox=true.",
    )
    validation_run_id: str | None = Field(
        default=None,
        description="The run that validated the sandbox; its results carry this plan's id "
        "(validation.list_results with plan=).",
    )
    forced: bool = Field(
        default=False, description="Applied despite being constrained (plan.apply force=true)."
    )


class ChangeKind(StrEnum):
    MODIFY = "modify"
    CREATE = "create"
    DELETE = "delete"
    RENAME = "rename"  # old_path -> path, possibly with edits


class FileEdit(Model):
    """One file's change given as edits instead of a diff (plan.create ``files``).

    ``modify``: ``edits`` against the current content (or ``new_text``, the
    whole new content). ``create``: ``new_text``. ``delete``: nothing else.
    ``rename``: ``old_path`` plus optional ``edits``/``new_text`` on its content.
    Each edit's ``location.path`` must be the file's ``path`` (``old_path``
    for a rename's edits, which apply to the content before the move).
    """

    path: str
    kind: ChangeKind = ChangeKind.MODIFY
    old_path: str | None = None
    edits: tuple[TextEdit, ...] = ()
    new_text: str | None = None


class FindingRef(Model):
    """A fix a tool attached to a stored finding: plan.create ``findings``."""

    result_id: str = Field(description="The ValidationResult's id.")
    finding: int = Field(ge=0, description="Index into the result's findings.")
    fix: int = Field(default=0, ge=0, description="Index into that finding's fixes.")


def _plan_path(path: str) -> str:
    why = why_refused(path)
    if why is not None:
        raise ValueError(f"plan target {path!r} refused: {why}")
    return path


PlanPath = Annotated[str, AfterValidator(_plan_path)]
"""A path a plan changes, relative to its resource's root: refused on
receipt when absolute, climbing with ``..``, in ``.git`` or not in normal
form (``acp_client.jail``), whoever sent it."""


class FileChange(Model):
    """One file of a plan's change set, as plan.preview shows it."""

    path: PlanPath = Field(
        description="The file's path after the change (the new name of a rename), relative to "
        "the resource's root: not absolute, no '..', not in .git."
    )
    kind: ChangeKind = ChangeKind.MODIFY
    old_path: PlanPath | None = Field(default=None, description="A rename's source path.")
    base_sha256: str | None = Field(
        default=None,
        description="sha256 of the content the change expects (of old_path for a rename); "
        "None for create.",
    )
    new_text: str | None = Field(default=None, description="Full new content; None for delete.")
    diff: str = Field(default="", description="Unified diff of this file, as git writes it.")
    edits: tuple[TextEdit, ...] = Field(
        default=(),
        description="Edits that turn the base content into new_text (code points, ranges on "
        "the base; located at old_path for a rename). A create is one insertion at 0:0; a "
        "delete has none. Non-overlapping, in document order.",
    )
    executable: bool = Field(default=False, description="The file is (to be) executable.")


class PlanPreview(Model):
    plan_id: str
    state: PlanState
    changes: tuple[FileChange, ...]
    plan_hash: str = Field(
        description="sha256 over the change set and each target file's current content; "
        "plan.apply must quote it back and is refused with CONFLICT if anything moved."
    )
    moved: tuple[str, ...] = Field(
        default=(),
        description="Targets whose content is no longer the change set's base: applying "
        "now would be a CONFLICT naming them.",
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
    stale: bool = Field(
        default=False, description="The file has changed since the finding was computed."
    )


class ContextPlan(Model):
    """A plan that changed the inspected line (applied) or would change it (pending)."""

    plan: Plan = Field(description="Title, author, state and decisions included.")
    applied_at: datetime | None = Field(default=None, description="None: not applied.")
    location: Location = Field(
        description="The lines it changed, where they are now (or would change)."
    )
    relocated: bool = Field(
        default=False,
        description="The file was edited since the apply and the lines were found again "
        "by their content, elsewhere than recorded.",
    )


class EntityKind(StrEnum):
    """What an entity is. A ``def`` or ``function`` directly in a class-like
    body is a method; ``key`` is a position in a data file (YAML, TOML, JSON)."""

    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"
    STRUCT = "struct"
    INTERFACE = "interface"
    TRAIT = "trait"
    IMPL = "impl"
    ENUM = "enum"
    MODULE = "module"
    TYPE = "type"
    KEY = "key"


class Entity(Model):
    """The innermost definition enclosing the position, or in a data file the
    key path to it: what CleverAgents calls a UKO entity summary
    (docs/acp-protocol.md says how the fields map)."""

    id: str = Field(
        description="Stable id: ``py:<kind>/<module>.<qualified name>`` for Python, "
        "``<language prefix>:<kind>/<path>#<qualified name>`` otherwise "
        "(``js:function/src/cart.js#Cart.add``, ``yaml:key/ci.yaml#jobs.test``)."
    )
    kind: EntityKind
    name: str = Field(
        description="Qualified name inside its file or module (``Class.method``, "
        "``Shape::area``, ``Billing::Invoice#add``); the key path in a data file."
    )
    signature: str = Field(
        description="Its header on one line, as written: ``def f(x: int) -> str``, "
        "``class C(Base)``, ``func (s *Server) Health(w http.ResponseWriter)``; "
        "empty for a key."
    )
    doc: str = Field(default="", description="The first line of its docstring or doc comment.")
    decorators: tuple[str, ...] = Field(
        default=(), description="Decorators, annotations or attributes, as written."
    )
    location: Location = Field(
        description="Its span: the whole range, decorators included (end line inclusive)."
    )
    language: str = Field(
        default="",
        description="The language it is written in (``python``, ``javascript``, "
        "``typescript``, ``tsx``, ``go``, ``rust``, ``java``, ``c``, ``cpp``, ``ruby``, "
        "``bash``, ``yaml``, ``toml``, ``json``), also a Markdown fence's language. "
        "Empty: not said (an older backend: Python).",
    )
    key_path: str | None = Field(
        default=None,
        description="In a data file, the keys from the document's root to the "
        "position: ``jobs.test.steps[2].run``, ``tool.ruff.lint.select[0]``; a key "
        'that is not a plain word is quoted (``scripts["a.b"]``).',
    )


class ContextItem(Model):
    """Other context about the position: a snippet (the entity's first lines,
    other findings of the same rule in the file) or a platform's note."""

    title: str
    body: str = ""
    location: Location | None = Field(
        default=None, description="Where the body comes from, when it is a place in a file."
    )
    language: str = Field(
        default="",
        description="When set, ``body`` is source code in that language (a Markdown "
        "fence's language): a client shows it as a code block.",
    )


class LineHistory(Model):
    """Who last changed the inspected line: a commit (``git blame``), or
    nobody yet (the line differs from the last commit)."""

    commit: str | None = Field(
        default=None, description="Full hash of the commit; None: not committed yet."
    )
    author: str = ""
    authored_at: datetime | None = None
    subject: str = Field(default="", description="The commit message's first line.")
    path: str | None = Field(
        default=None,
        description="The file's path in that commit when it was elsewhere (renamed since).",
    )


class ContextInfo(Model):
    """What is known about one position, in sections a client shows in this order."""

    resource_id: str
    path: str = Field(description="POSIX path relative to the resource root.")
    line: Position
    character: Position | None = Field(default=None, description="None: the whole line.")
    findings: tuple[ContextFinding, ...] = ()
    provenance: tuple[ContextPlan, ...] = Field(
        default=(), description="Applied plans, newest first, then pending ones."
    )
    history: LineHistory | None = Field(
        default=None,
        description="The commit that last changed the line, when the resource is a git "
        "work tree; after ``provenance``, which comes first.",
    )
    entity: Entity | None = None
    items: tuple[ContextItem, ...] = Field(
        default=(), description="Snippets, within a budget of lines and bytes."
    )
    notes: tuple[str, ...] = Field(
        default=(),
        description="What was not looked at, and why (a binary or too large file, a "
        "syntax error): an empty section is then not a clean bill.",
    )
