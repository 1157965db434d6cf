"""Silencing one finding the way its tool says: a code action that writes the
comment, and completion of the codes inside one.

A validation's ``suppress`` (from its preset, or the user's ``acp.toml``)
says how: ``# noqa: {codes}`` at the end of the line, ``//
eslint-disable-next-line {codes}`` on the line above... (``comments``).

- **"Suppress *code* on this line (*tool*)"** on a diagnostic whose finding
  has a code: the edit writes the comment, or adds the code to the one
  already there. A plain buffer edit, undone like any other; the next run
  of the tool drops the finding.
- **Completion** after a comment's prefix (``# noqa: `` ...): the codes of
  that validation's findings on the line the comment silences first, then
  the other codes it reported in the resource, each with its rule's
  description and link; a code the comment already has is not offered.
  Answered from the snapshot: no backend call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lsprotocol import types

from acp_client.models import Finding, SuppressPlace, ValidationSpec
from lsp_server.code_actions import ActionRequest, finding_of
from lsp_server.commands import QUICK_FIX
from lsp_server.completion import CompletionRequest
from lsp_server.features import Feature
from lsp_server.features.suppress.comments import Form, suppression, typing
from lsp_server.snapshot import Snapshot
from lsp_server.workspace_edits import EditorFile, EditSupport, Stale, fix_edit


class Suppress(Feature):
    def actions(self, request: ActionRequest) -> Iterable[types.CodeAction]:
        snapshot = request.snapshot
        document, placement = snapshot.document, snapshot.placement
        if not request.wanted(QUICK_FIX) or document is None or placement is None:
            return
        offered: set[tuple[str, str, int]] = set()
        newline = "\r\n" if "\r\n" in document.text else "\n"
        for diagnostic in request.here:
            hit = finding_of(diagnostic, snapshot)
            if hit is None or hit[2].location is None:
                continue
            result, _, finding = hit
            spec = snapshot.specs.get(result.validation)
            location = snapshot.reading(result).location(hit[2].location)  # on the buffer now
            if spec is None or spec.suppress is None or not finding.code or location is None:
                continue
            if location.path != placement.logical_path:
                continue
            seen = (result.validation, finding.code, location.line)
            if seen in offered:
                continue
            offered.add(seen)
            edit = suppression(
                document.lines,
                location.path,
                location.line,
                finding.code,
                spec.suppress,
                newline=newline,
            )
            if edit is None:
                continue  # already silenced (the tool has not run since)
            target = EditorFile(document.uri, document.version, document.text)
            support = EditSupport.of(snapshot.support)
            try:
                workspace_edit = fix_edit(
                    [edit], {location.path: target}, snapshot.encoding, support
                )
            except Stale:
                continue
            yield types.CodeAction(
                title=f"Suppress {finding.code} on this line ({result.validation})",
                kind=QUICK_FIX,
                diagnostics=[diagnostic],
                edit=workspace_edit,
            )

    def completions(self, request: CompletionRequest) -> Iterable[types.CompletionItem]:
        snapshot = request.snapshot
        placement = snapshot.placement
        if placement is None or placement.sandbox:
            return
        seen: set[str] = set()
        for spec in snapshot.specs.values():
            if spec.suppress is None:
                continue
            form = Form.of(spec.suppress)
            at = typing(request.text, request.character, form)
            if at is None:
                continue
            below = 1 if spec.suppress.where is SuppressPlace.LINE_ABOVE else 0
            line = request.position.line + below
            for code, finding, here in _codes(snapshot, spec, placement.logical_path, line):
                if code in seen or code in at.present or not code.startswith(at.typed):
                    continue
                seen.add(code)
                yield _item(request, code, finding, spec, here=here, start=at.start)


def _codes(
    snapshot: Snapshot, spec: ValidationSpec, path: str, line: int
) -> Iterator[tuple[str, Finding, bool]]:
    """The codes of ``spec``'s findings: those on ``line`` of the file first
    (True), then every other it reported in the resource."""
    results = [r for r in snapshot.latest if r.validation == spec.name]
    found = [(finding, _on(finding, path, line)) for r in results for finding in r.findings]
    for here in (True, False):
        for finding, on_line in found:
            if on_line is here and finding.code:
                yield finding.code, finding, here


def _on(finding: Finding, path: str, line: int) -> bool:
    location = finding.location
    return location is not None and location.path == path and location.line == line


def _item(
    request: CompletionRequest,
    code: str,
    finding: Finding,
    spec: ValidationSpec,
    *,
    here: bool,
    start: int,
) -> types.CompletionItem:
    about = finding.rule_description or finding.message
    link = f"\n\n<{finding.help_uri}>" if finding.help_uri else ""
    return types.CompletionItem(
        label=code,
        kind=types.CompletionItemKind.Constant,
        detail=f"{spec.name}: {about}",
        documentation=request.documentation(about + link),
        sort_text=f"{0 if here else 1}{code}",
        text_edit=types.TextEdit(range=request.replacing(start), new_text=code),
        label_details=request.label_details("on this line" if here else spec.name),
    )
