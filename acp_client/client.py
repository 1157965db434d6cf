"""``AcpClient``: one typed async method per ACP operation, plus events."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from acp_client.errors import MethodNotFound, ServerFault, Unsupported, VersionMismatch
from acp_client.events import Event, StreamReset, UnknownEvent, parse_event
from acp_client.models import (
    ContextInfo,
    Decision,
    FileEdit,
    FindingRef,
    Plan,
    PlanPreview,
    PlanState,
    Resource,
    ValidationResult,
)
from acp_client.operations import (
    OPERATIONS,
    PROTOCOL_VERSION,
    ContextInspectParams,
    InitializeParams,
    InitializeResult,
    Params,
    PlanApplyParams,
    PlanCreateParams,
    PlanExecuteParams,
    PlanListParams,
    PlanListResult,
    PlanRef,
    PlanSettleParams,
    ResourceListParams,
    ResourceListResult,
    ResourceRegisterParams,
    ResourceResolveParams,
    ResourceResolveResult,
    ResourceUnregisterParams,
    ValidationCancelParams,
    ValidationCancelResult,
    ValidationListParams,
    ValidationListResult,
    ValidationListResultsParams,
    ValidationListResultsResult,
    ValidationRunParams,
    ValidationRunResult,
    ValidationSchemaParams,
    ValidationSchemaResult,
    alias_for,
    canonical_method,
    version_compatible,
)
from acp_client.transport import Transport

log = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)


class AcpClient:
    """Speaks ACP over any ``Transport``; knows nothing of LSP or storage."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.server: InitializeResult | None = None
        self._hello = InitializeParams()  # what initialize last said about this client
        # Methods the backend only knows under their A2A name.
        self._use_alias: set[str] = set()

    @property
    def description(self) -> str:
        return self.transport.description

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def __aenter__(self) -> AcpClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def supports(self, method: str) -> bool:
        """Whether the backend offers ``method`` (one of ours), as far as its
        ``acp.initialize`` said; True before that, or when it listed nothing."""
        offered = self._offered()
        return offered is None or method in offered

    def _offered(self) -> dict[str, str] | None:
        """Our method name -> the name the backend listed it under; None when
        the backend did not list its operations (an older one)."""
        if self.server is None or not self.server.operations:
            return None
        return {canonical_method(name): name for name in self.server.operations}

    async def _call(self, params: Params, method: str, result_type: type[R]) -> R:
        assert OPERATIONS[method].params is type(params), method
        payload = params.model_dump(mode="json", exclude_none=True)
        offered = self._offered()
        if offered is not None and method not in offered and method != "acp.initialize":
            raise Unsupported(method)  # no round trip for what it said it lacks
        if offered is not None:
            wire_method = offered.get(method, method)
        else:
            wire_method = (alias_for(method) if method in self._use_alias else None) or method
        try:
            raw = await self.transport.call(wire_method, payload)
        except MethodNotFound:
            # A deployment that did not list its operations and speaks only
            # the A2A names: retry once under that name.
            alias = alias_for(method)
            if offered is not None or alias is None or wire_method == alias:
                raise Unsupported(method) from None
            try:
                raw = await self.transport.call(alias, payload)
            except MethodNotFound:
                raise Unsupported(method) from None
            self._use_alias.add(method)
        try:
            return result_type.model_validate(raw)
        except ValidationError as exc:
            raise ServerFault(f"malformed {method} result: {exc.errors()[0]['msg']}") from exc

    # --- operations -------------------------------------------------------

    async def initialize(
        self, client_name: str = "acp-client", client_version: str = ""
    ) -> InitializeResult:
        self._hello = InitializeParams(client_name=client_name, client_version=client_version)
        result = await self._call(self._hello, "acp.initialize", InitializeResult)
        if not version_compatible(PROTOCOL_VERSION, result.protocol_version):
            raise VersionMismatch(
                f"backend speaks ACP {result.protocol_version}, this client {PROTOCOL_VERSION}",
                remedy="upgrade the older side",
            )
        self.server = result
        return result

    async def last_event_id(self) -> int | None:
        """The newest event's id now (None: no event yet), from a repeated
        ``acp.initialize``."""
        return (await self._call(self._hello, "acp.initialize", InitializeResult)).last_event_id

    async def resource_list(self) -> tuple[Resource, ...]:
        result = await self._call(ResourceListParams(), "resource.list", ResourceListResult)
        return result.resources

    async def resource_register(self, path: str, name: str | None = None) -> Resource:
        return await self._call(
            ResourceRegisterParams(path=path, name=name), "resource.register", Resource
        )

    async def resource_unregister(self, resource: str) -> Resource:
        return await self._call(
            ResourceUnregisterParams(resource=resource), "resource.unregister", Resource
        )

    async def resource_resolve(self, path: str) -> ResourceResolveResult:
        return await self._call(
            ResourceResolveParams(path=path), "resource.resolve", ResourceResolveResult
        )

    async def validation_list(self, resource: str) -> ValidationListResult:
        return await self._call(
            ValidationListParams(resource=resource), "validation.list", ValidationListResult
        )

    async def validation_schema(self, resource: str | None = None) -> ValidationSchemaResult:
        """What an ``acp.toml`` may declare; with ``resource``, its presets' tools are
        looked up on PATH as that resource's validators would find them."""
        return await self._call(
            ValidationSchemaParams(resource=resource), "validation.schema", ValidationSchemaResult
        )

    async def validation_run(
        self,
        resource: str,
        validations: tuple[str, ...] | None = None,
        paths: tuple[str, ...] | None = None,
        plan: str | None = None,
    ) -> ValidationRunResult:
        params = ValidationRunParams(
            resource=resource, validations=validations, paths=paths, plan=plan
        )
        return await self._call(params, "validation.run", ValidationRunResult)

    async def validation_cancel(self, run_id: str) -> ValidationCancelResult:
        return await self._call(
            ValidationCancelParams(run_id=run_id), "validation.cancel", ValidationCancelResult
        )

    async def validation_list_results(
        self,
        resource: str,
        plan: str | None = None,
        after: str | None = None,
        history: bool = False,
        limit: int = 200,
    ) -> ValidationListResultsResult:
        params = ValidationListResultsParams(
            resource=resource, plan=plan, after=after, history=history, limit=limit
        )
        return await self._call(params, "validation.list_results", ValidationListResultsResult)

    async def latest_results(
        self, resource: str, plan: str | None = None, *, history: bool = False
    ) -> list[ValidationResult]:
        """Every validation's latest result (every result with ``history``), all pages."""
        results: list[ValidationResult] = []
        cursor: str | None = None
        while True:
            page = await self.validation_list_results(
                resource, plan=plan, after=cursor, history=history
            )
            results.extend(page.results)
            cursor = page.next_cursor
            if cursor is None:
                return results

    async def plan_list(
        self, resource: str | None = None, states: tuple[PlanState, ...] | None = None
    ) -> tuple[Plan, ...]:
        params = PlanListParams(resource=resource, states=states)
        return (await self._call(params, "plan.list", PlanListResult)).plans

    async def plan_get(self, plan_id: str) -> Plan:
        return await self._call(PlanRef(plan_id=plan_id), "plan.get", Plan)

    async def plan_create(
        self,
        resource: str,
        *,
        title: str | None = None,
        description: str = "",
        author: str = "",
        diff: str | None = None,
        files: tuple[FileEdit, ...] | None = None,
        findings: tuple[FindingRef, ...] | None = None,
        decisions: tuple[Decision, ...] = (),
    ) -> Plan:
        """Submit a change set: exactly one of ``diff``, ``files`` or ``findings``."""
        params = PlanCreateParams(
            resource=resource,
            title=title,
            description=description,
            author=author,
            diff=diff,
            files=files,
            findings=findings,
            decisions=decisions,
        )
        return await self._call(params, "plan.create", Plan)

    async def plan_execute(
        self,
        resource: str,
        validation: str,
        *,
        title: str | None = None,
        description: str = "",
        paths: tuple[str, ...] | None = None,
    ) -> Plan:
        """Start a validation's fix in a sandbox; the plan completes through plan.changed."""
        params = PlanExecuteParams(
            resource=resource,
            validation=validation,
            title=title,
            description=description,
            paths=paths,
        )
        return await self._call(params, "plan.execute", Plan)

    async def plan_preview(self, plan_id: str) -> PlanPreview:
        return await self._call(PlanRef(plan_id=plan_id), "plan.preview", PlanPreview)

    async def plan_apply(
        self,
        plan_id: str,
        expected_hash: str,
        *,
        force: bool = False,
        applied_by_client: bool = False,
    ) -> Plan:
        params = PlanApplyParams(
            plan_id=plan_id,
            expected_hash=expected_hash,
            force=force,
            applied_by_client=applied_by_client,
        )
        return await self._call(params, "plan.apply", Plan)

    async def plan_settle(self, plan_id: str, *, in_buffers: bool) -> Plan:
        """Where a plan applied in the editor stands now (``PlanSettleParams``)."""
        params = PlanSettleParams(plan_id=plan_id, in_buffers=in_buffers)
        return await self._call(params, "plan.settle", Plan)

    async def plan_cancel(self, plan_id: str) -> Plan:
        return await self._call(PlanRef(plan_id=plan_id), "plan.cancel", Plan)

    async def context_inspect(
        self,
        path: str,
        line: int,
        character: int | None = None,
        *,
        resource: str | None = None,
        text: str | None = None,
    ) -> ContextInfo:
        params = ContextInspectParams(
            path=path, resource=resource, line=line, character=character, text=text
        )
        return await self._call(params, "context.inspect", ContextInfo)

    # --- events -----------------------------------------------------------

    async def events(
        self, after: int | None = None, *, partial: bool = False
    ) -> AsyncIterator[Event]:
        """Typed events after ``after``, each delivered once, in id order.

        Unknown methods are skipped (a newer backend); malformed events are
        logged and skipped. A ``StreamReset`` is passed through: the caller
        must resync by listing. Transport failures propagate. ``partial``:
        a ``validation.result`` may carry only the files its run covered
        (``covered``), for the caller to merge (``acp_client.covered``).
        """
        last = after
        # Only asked when wanted: a plugged-in transport may not know the flag.
        stream = (
            self.transport.events(after, partial=True) if partial else self.transport.events(after)
        )
        async for message in stream:
            try:
                event = parse_event(message)
            except UnknownEvent as exc:
                log.debug("skipping unknown event %s", exc)
                continue
            except ServerFault as exc:
                log.warning("skipping malformed event: %s", exc)
                continue
            if isinstance(event, StreamReset):
                # Its id is where the stream continues from; older state is lost.
                last = event.event_id
                yield event
                continue
            if last is not None and event.event_id <= last:
                continue  # a replay after a reconnect
            last = event.event_id
            yield event
