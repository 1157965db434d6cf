"""Code actions: read-only listing at a range, and edits resolved when chosen.

The listing (``listing``) is cheap and pure: it names what can be done at
a range from the diagnostics shown there (their ``data`` leads back to the
finding), the resource's declared validations and its open plans. A quick
fix's edit is computed only on ``codeAction/resolve`` (or, for clients
without resolve, when its command runs); anything that changes state is an
``acp.*`` command (``lsp_server.features.commands``).

This feature keeps what the listing reads beyond the diagnostics: each
resource's validation declarations and its plans, filled at resync and kept
current by ``plan.changed`` events.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from lsprotocol import types

from acp_client.client import AcpClient
from acp_client.errors import RemoteError, ServerFault
from acp_client.events import Event, PlanChanged, ResourceChanged
from acp_client.models import Plan, Resource, TextEdit, ValidationResult, ValidationSpec
from acp_client.paths import path_to_uri
from lsp_server.advertised import APPLY_FIX, FIX_ALL
from lsp_server.features import Feature
from lsp_server.features.code_actions.listing import (
    NEEDS,
    DocumentView,
    FixAllArgs,
    FixArgs,
    command_of,
    fixable,
    list_actions,
)
from lsp_server.features.diagnostics.mapping import as_objects
from lsp_server.roots import DECLARATION_FILE, FileKey, Placement, file_path
from lsp_server.workspace_edits import EditSupport, Stale, Target, fix_edit, sha256

if TYPE_CHECKING:
    from lsp_server.features.diagnostics import Diagnostics
    from lsp_server.server import AcpLanguageServer

log = logging.getLogger(__name__)


class CodeActions(Feature):
    def __init__(self, session: AcpLanguageServer, diagnostics: Diagnostics) -> None:
        super().__init__(session)
        self._diagnostics = diagnostics
        self._specs: dict[str, dict[str, ValidationSpec]] = {}  # by resource id, then name
        self.plans: dict[str, Plan] = {}  # by plan id
        self._hashes: dict[tuple[str, int | None], str] = {}  # (uri, version) -> sha256
        self._shown: dict[FileKey, tuple[str, list[types.Diagnostic]]] = {}  # by result id

    # --- what the listing reads --------------------------------------------

    async def resync(self, client: AcpClient, resources: Mapping[str, Resource]) -> None:
        for resource in resources.values():
            await self._fill(client, resource)

    async def _fill(self, client: AcpClient, resource: Resource) -> None:
        """Declarations and plans; a backend without plans (or without
        ``validation.list``) is a degraded feature, said once by the session."""
        try:
            listed = await self.session.if_offered(client.validation_list(resource.id))
            plans = await self.session.if_offered(client.plan_list(resource.id))
        except (RemoteError, ServerFault) as exc:
            log.warning("cannot list the validations or plans of %s: %s", resource.name, exc)
            return
        if listed is not None:
            self._specs[resource.id] = {spec.name: spec for spec in listed.validations}
        for stale in [p for p in self.plans.values() if p.resource_id == resource.id]:
            del self.plans[stale.id]
        self.plans.update((plan.id, plan) for plan in plans or ())

    async def on_event(self, client: AcpClient, event: Event) -> None:
        if isinstance(event, PlanChanged):
            self.plans[event.plan.id] = event.plan
        elif isinstance(event, ResourceChanged) and event.change == "unregistered":
            self._specs.pop(event.resource.id, None)
            for plan in [p for p in self.plans.values() if p.resource_id == event.resource.id]:
                del self.plans[plan.id]

    async def document_saved(self, uri: str, placement: Placement | None) -> None:
        client = self.session.link.client
        if placement is not None and placement.logical_path == DECLARATION_FILE and client:
            await self.session.guarded(self._fill(client, placement.resource))

    def document_closed(self, uri: str, placement: Placement | None) -> None:
        for key in [k for k in self._hashes if k[0] == uri]:
            del self._hashes[key]
        if placement is not None:
            self._shown.pop(placement.key, None)

    # --- requests ----------------------------------------------------------

    def offered(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        placement = self.session.placed(uri)
        if placement is None:
            return None
        resolve = "edit" in self.session.support.code_action_resolve
        context = params.context
        view = self._view(uri, placement)
        actions = list_actions(view, params.range, context.only, resolve, context.diagnostics)
        return [action for action in actions if self._can(command_of(action))]

    def _can(self, command: str | None) -> bool:
        """Whether an action's command can work here: the backend offers its
        operation; a fix reaches the buffer (resolved, or sent)."""
        support = self.session.support
        if command in (APPLY_FIX, FIX_ALL):
            return "edit" in support.code_action_resolve or support.apply_edit
        client = self.session.link.client
        operation = NEEDS.get(command or "")
        return operation is None or client is None or client.supports(operation)

    def _view(self, uri: str, placement: Placement) -> DocumentView:
        resource_id = placement.resource.id
        return DocumentView(
            uri=uri,
            resource_id=resource_id,
            path=placement.logical_path,
            sandbox=placement.sandbox,
            diagnostics=self._shown_on(placement.key),
            latest=self._diagnostics.store.latest,
            specs=self._specs.get(resource_id, {}),
            plans=[p for p in self.plans.values() if p.resource_id == resource_id],
            fresh=lambda result: self._fresh(uri, placement.logical_path, result),
        )

    def _shown_on(self, key: FileKey) -> list[types.Diagnostic]:
        """The file's diagnostics as the editor has them, converted once per
        change of the marks or the text (the presenter's result id)."""
        presenter = self._diagnostics.presenter
        result_id = presenter.result_id(key)
        cached = self._shown.get(key)
        if cached is None or cached[0] != result_id:
            cached = self._shown[key] = (result_id, as_objects(presenter.diagnostics(key)))
        return cached[1]

    def resolve(self, action: types.CodeAction) -> types.CodeAction:
        data = action.data
        if not isinstance(data, dict) or data.get("command") not in (APPLY_FIX, FIX_ALL):
            return action
        raw = data.get("arguments")
        args = (FixArgs if data["command"] == APPLY_FIX else FixAllArgs).model_validate(raw)
        edit = self.fix_edit(args)
        if edit is None:
            # No longer fits: the command says so when chosen.
            action.command = types.Command(action.title, data["command"], arguments=[raw])
        else:
            action.edit = edit
        return action

    # --- edits -------------------------------------------------------------

    def fix_edit(self, args: FixArgs | FixAllArgs) -> types.WorkspaceEdit | None:
        """The edit of one fix, or of every fix of a document that does not
        overlap an earlier one; None when it no longer fits the text."""
        placement = self.session.placed(args.uri)
        if placement is None:
            return None
        if isinstance(args, FixArgs):
            result = self._diagnostics.store.latest(
                args.resource_id, args.validation, args.plan_id, args.result_id
            )
            if result is None:
                return None
            findings = result.findings
            if not (
                0 <= args.finding < len(findings)
                and 0 <= args.fix < len(findings[args.finding].fixes)
            ):
                return None
            chosen = [(result, findings[args.finding].fixes[args.fix].edits)]
        else:
            chosen = self._all_fixes(args.uri, placement)
        edits = [edit for _, fix in chosen for edit in fix]
        paths = {edit.location.path for edit in edits}
        targets = {
            path: self.target(placement.resource.id, path, placement, args.uri) for path in paths
        }
        expected = {
            p: h for result, _ in chosen for p, h in result.file_hashes.items() if p in paths
        }
        try:
            return fix_edit(
                edits, _known(targets), self.session.encoding, self.edit_support(), expected
            )
        except Stale as exc:
            log.info("fix not offered: %s", exc)
            return None

    def _all_fixes(
        self, uri: str, placement: Placement
    ) -> list[tuple[ValidationResult, tuple[TextEdit, ...]]]:
        """The first fix of every fixable finding, skipping any that overlaps
        one taken before (the next run offers it again)."""
        taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
        chosen: list[tuple[ValidationResult, tuple[TextEdit, ...]]] = []
        for result, _, finding in fixable(self._view(uri, placement)):
            edits = finding.fixes[0].edits
            spans = [_span(edit) for edit in edits]
            if any((a[0] < b[1] and b[0] < a[1]) or a == b for a in spans for b in taken):
                continue
            taken.extend(spans)
            chosen.append((result, edits))
        return chosen

    def target(
        self,
        resource_id: str,
        path: str,
        placement: Placement | None = None,
        uri: str | None = None,
    ) -> Target | None:
        """A file of a resource as the editor sees it now: the open buffer
        (the document ``uri`` itself for its own path), else the disk."""
        if placement is not None and uri is not None and path == placement.logical_path:
            return self._open_target(uri)
        real = self.session.roots.path_of((resource_id, path))
        if real is None:
            return None
        target_uri = path_to_uri(real)
        for open_uri in self.session.workspace.text_documents:
            if file_path(open_uri) == real:
                return self._open_target(open_uri)
        return Target(target_uri, None, _read(real))

    def _open_target(self, uri: str) -> Target:
        document = self.session.workspace.get_text_document(uri)
        path = file_path(uri)
        on_disk = _read(path) if path is not None else None
        return Target(uri, document.version, document.source, dirty=on_disk != document.source)

    def edit_support(self) -> EditSupport:
        return EditSupport.of(self.session.support)

    def _fresh(self, uri: str, path: str, result: ValidationResult) -> bool:
        """The result's findings were computed on the text the editor holds."""
        expected = result.file_hashes.get(path)
        if expected is None:
            return True
        document = self.session.workspace.get_text_document(uri)
        key = (uri, document.version)
        digest = self._hashes.get(key)
        if digest is None:
            digest = self._hashes[key] = sha256(document.source)
        return digest == expected


def _known(targets: Mapping[str, Target | None]) -> dict[str, Target]:
    return {path: target for path, target in targets.items() if target is not None}


def _span(edit: TextEdit) -> tuple[tuple[int, int], tuple[int, int]]:
    location = edit.location
    start = (location.line, location.character)
    end = (
        (location.end_line, location.end_character or 0) if location.end_line is not None else start
    )
    return start, max(start, end)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError:  # not text: it cannot match a base, so it is never edited over
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            return handle.read()
    except OSError:
        return None
