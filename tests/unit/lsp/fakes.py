"""Fakes the language server's features are unit-tested against: an editor
that records what it was asked, a backend that answers from a script, the
backend calls over it, and snapshots as a session would take them."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from lsprotocol import types
from pytest_lsp import client_capabilities

from acp_client.errors import AcpError, NotFound
from acp_client.models import (
    ChangeKind,
    FileChange,
    Plan,
    PlanPhase,
    PlanPreview,
    PlanState,
    Resource,
    ValidationResult,
    ValidationSpec,
)
from acp_client.text import digest
from lsp_server.calls import BackendCalls
from lsp_server.capabilities import ClientSupport
from lsp_server.documents import Document
from lsp_server.editor import report_failure
from lsp_server.marks import Held, placed
from lsp_server.notices import Notices
from lsp_server.results import ResultStore
from lsp_server.roots import FileKey, Placement, Roots, inside
from lsp_server.settings import Settings
from lsp_server.snapshot import Snapshot
from lsp_server.workspace_edits import EditorFile

T = TypeVar("T")
NOW = datetime(2026, 1, 1, tzinfo=UTC)
RESOURCE = Resource(id="R", name="app", root="/r", created_at=NOW)
URI = "file:///r/a.py"


@dataclass
class FakeSource:
    """What the diagnostics feature reads of a session: roots, results and
    the open documents (by file)."""

    roots: Roots = field(default_factory=Roots)
    results: ResultStore = field(default_factory=ResultStore)
    documents: dict[FileKey, Document] = field(default_factory=dict)

    def document_at(self, key: FileKey) -> Document | None:
        return self.documents.get(key)


def support(profile: str = "visual-studio-code") -> ClientSupport:
    """What a recorded editor profile supports."""
    return ClientSupport.of(
        types.InitializeParams(capabilities=client_capabilities(profile))  # type: ignore[call-arg]
    )


@dataclass
class FakeEditor:
    """An ``Editor`` that records every call; ``applies`` is its answer to
    ``workspace/applyEdit``."""

    applies: bool = True
    said: list[tuple[types.MessageType, str]] = field(default_factory=list)
    logged: list[str] = field(default_factory=list)
    edits: list[tuple[types.WorkspaceEdit, str]] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    progress: list[tuple[str, str, str]] = field(default_factory=list)  # (step, token, text)
    published: list[str] = field(default_factory=list)
    refreshed: int = 0
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    def say(self, message: str, kind: types.MessageType) -> None:
        self.said.append((kind, message))

    def log(self, message: str) -> None:
        self.logged.append(message)

    async def apply_edit(
        self, edit: types.WorkspaceEdit, label: str
    ) -> types.ApplyWorkspaceEditResult:
        self.edits.append((edit, label))
        reason = None if self.applies else "the user declined"
        return types.ApplyWorkspaceEditResult(applied=self.applies, failure_reason=reason)

    async def show_document(self, uri: str) -> bool:
        self.shown.append(uri)
        return True

    async def start_progress(self, token: str, begin: Any, on_cancel: Any) -> bool:
        self.progress.append(("begin", token, begin.title))
        return True

    def report_progress(self, token: str, message: str, percentage: int | None = None) -> None:
        self.progress.append(("report", token, message))

    def end_progress(self, token: str, message: str) -> None:
        self.progress.append(("end", token, message))

    def publish(self, params_json: str) -> None:
        self.published.append(params_json)

    def refresh_diagnostics(self) -> None:
        self.refreshed += 1

    def backed_up(self) -> bool:
        return False

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.append(task)
        task.add_done_callback(report_failure)
        return task

    def messages(self) -> list[str]:
        return [message for _, message in self.said]


@dataclass
class FakeBackend:
    """An ``AcpClient`` stand-in answering from its fields; what was asked
    to change is recorded in ``calls``."""

    plans: dict[str, Plan] = field(default_factory=dict)
    previews: dict[str, PlanPreview] = field(default_factory=dict)
    refuses: AcpError | None = None  # plan.apply's answer instead of applying
    calls: list[tuple[str, dict[str, object]]] = field(default_factory=list)

    def supports(self, operation: str) -> bool:
        return True

    async def plan_get(self, plan_id: str) -> Plan:
        if plan_id not in self.plans:
            raise NotFound(f"no plan {plan_id}")
        return self.plans[plan_id]

    async def plan_preview(self, plan_id: str) -> PlanPreview:
        return self.previews[plan_id]

    async def plan_apply(
        self, plan_id: str, plan_hash: str, *, force: bool = False, applied_by_client: bool = False
    ) -> Plan:
        self.calls.append(
            ("plan.apply", {"hash": plan_hash, "force": force, "by_client": applied_by_client})
        )
        if self.refuses is not None:
            raise self.refuses
        state = PlanState.IN_EDITOR if applied_by_client else PlanState.APPLIED
        applied = self.plans[plan_id].model_copy(update={"state": state})
        self.plans[plan_id] = applied
        return applied

    async def plan_settle(self, plan_id: str, *, in_buffers: bool) -> Plan:
        self.calls.append(("plan.settle", {"in_buffers": in_buffers}))
        return self.plans[plan_id]


def calls(backend: object = None) -> tuple[BackendCalls, FakeEditor]:
    editor = FakeEditor()

    @dataclass
    class Link:
        client: object

        def check_moved(self) -> bool:
            return False

    return BackendCalls(Link(backend), Notices(editor.say, editor.log)), editor  # type: ignore[arg-type]


def plan(
    state: PlanState = PlanState.COMPLETE,
    paths: tuple[str, ...] = ("a.py",),
    reason: str | None = None,
    plan_id: str = "P1",
) -> Plan:
    return Plan(
        id=plan_id,
        resource_id=RESOURCE.id,
        title="ruff fix",
        phase=PlanPhase.APPLY,
        state=state,
        created_at=NOW,
        updated_at=NOW,
        paths=paths,
        reason=reason,
    )


def preview(
    plan_id: str, changes: Sequence[FileChange], moved: tuple[str, ...] = ()
) -> PlanPreview:
    return PlanPreview(
        plan_id=plan_id,
        state=PlanState.COMPLETE,
        changes=tuple(changes),
        plan_hash="H",
        moved=moved,
    )


def modify(path: str, base: str, edits: Sequence[Any], new_text: str) -> FileChange:
    return FileChange(
        path=path,
        kind=ChangeKind.MODIFY,
        base_sha256=digest(base),
        new_text=new_text,
        edits=tuple(edits),
    )


@dataclass
class Files:
    """The files as the editor has them: open buffers and the disk, by path."""

    disk: dict[str, str] = field(default_factory=dict)
    buffers: dict[str, tuple[int, str]] = field(default_factory=dict)  # path -> (version, text)

    def __call__(self, resource_id: str, path: str) -> EditorFile | None:
        if resource_id != RESOURCE.id or not inside(path):  # as Roots.path_of refuses
            return None
        uri = f"file:///r/{path}"
        on_disk = self.disk.get(path)
        if path in self.buffers:
            version, text = self.buffers[path]
            return EditorFile(uri, version, text, dirty=on_disk != text.removeprefix("\ufeff"))
        return EditorFile(uri, None, on_disk)


def schema() -> Any:
    """The reference backend's ``validation.schema`` answer."""
    from acp_backend.validation.schema import validation_schema

    return validation_schema()


def snapshot(
    text: str = "import os\nx = 1\n",
    *,
    results: Sequence[ValidationResult] = (),
    specs: Mapping[str, ValidationSpec] | None = None,
    plans: Sequence[Plan] = (),
    files: Files | None = None,
    profile: str = "visual-studio-code",
    backend: object = None,
    path: str = "a.py",
    sandbox: bool = False,
    version: int = 1,
    declares: Any = None,
) -> Snapshot:
    """A snapshot of ``path`` open with ``text``, showing ``results``, as a
    session would take it."""
    placement = Placement(RESOURCE, path, sandbox, "/sandbox" if sandbox else None)
    document = Document(f"file:///r/{path}", version, text, placement)
    held: list[Held] = [(r, placed(r)[path]) for r in results if path in placed(r)]
    files = files or Files(
        disk={path: text.removeprefix("\ufeff")}, buffers={path: (version, text)}
    )
    return Snapshot(
        support(profile),
        "utf-16",
        Settings(),
        backend,  # type: ignore[arg-type]
        (RESOURCE,),
        files,
        document.uri,
        document,
        placement,
        tuple(held),
        specs=specs or {},
        plans=tuple(plans),
        latest=tuple(results),
        schema=declares,
    )


def with_text(shot: Snapshot, text: str) -> Snapshot:
    """The same snapshot over other text (the user typed)."""
    assert shot.document is not None
    return replace(shot, document=replace(shot.document, text=text))


@dataclass
class FakeClient:
    """An ``AcpClient`` stand-in for the session: resources under ``/r``
    resolve to ``RESOURCE``; listings answer from ``results``; a
    ``plan.get`` waits for ``plans_known`` (a backend that hangs)."""

    results: dict[str | None, list[ValidationResult]] = field(default_factory=dict)  # by plan
    plans: dict[str, Plan] = field(default_factory=dict)
    plans_known: asyncio.Event = field(default_factory=asyncio.Event)
    asked: list[str] = field(default_factory=list)

    def supports(self, operation: str) -> bool:
        return True

    async def resource_resolve(self, path: str) -> Any:
        from acp_client.operations import ResourceResolveResult

        self.asked.append(f"resource.resolve {path}")
        if not path.startswith("/r/"):
            raise NotFound(path)
        return ResourceResolveResult(
            resource=RESOURCE, logical_path=path.removeprefix("/r/"), sandbox=False
        )

    async def resource_list(self) -> tuple[Resource, ...]:
        return (RESOURCE,)

    async def latest_results(self, resource: str, plan: str | None = None) -> list[Any]:
        self.asked.append(f"latest_results {plan}")
        return list(self.results.get(plan, ()))

    async def validation_list(self, resource: str) -> Any:
        from acp_client.operations import ValidationListResult

        return ValidationListResult(validations=())

    async def plan_list(self, resource: str | None = None) -> tuple[Plan, ...]:
        return tuple(self.plans.values())

    async def validation_schema(self, resource: str | None = None) -> Any:
        self.asked.append("validation.schema")
        return schema()

    async def plan_get(self, plan_id: str) -> Plan:
        self.asked.append(f"plan.get {plan_id}")
        await self.plans_known.wait()
        return self.plans[plan_id]

    async def plan_preview(self, plan_id: str) -> PlanPreview:
        self.asked.append(f"plan.preview {plan_id}")
        plan = self.plans[plan_id]
        return PlanPreview(plan_id=plan_id, state=plan.state, changes=(), plan_hash="0" * 64)


def edited(shot: Snapshot, text: str) -> Snapshot:
    """The same snapshot after the user typed ``text`` without saving (the
    text as last saved, what the tools read, is kept)."""
    assert shot.document is not None
    document = replace(shot.document, text=text, saved=shot.document.last_saved)
    return replace(shot, document=document)
