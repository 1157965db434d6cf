"""A test editor's buffers: ``workspace/applyEdit`` answered as an editor does.

pytest-lsp has no handler for ``workspace/applyEdit``. This one keeps the
text and version of each open document, refuses a versioned edit to a
buffer whose version moved (as VS Code does), applies the edits in the
negotiated position encoding and tells the server with ``didChange``, so
what the server believes and what the "editor" shows stay one thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from lsprotocol import types

from tests.support.edit_text import apply_edits
from tests.support.lsp_harness import Session, uri


def _tell_actions_from_commands(session: Session) -> None:
    """lsprotocol reads every ``CodeAction`` that has a ``command`` as a
    ``Command`` (its union hook only asks whether the key exists); an
    editor tells them apart by the type of ``command``, and so does this."""
    converter = session.client.protocol._converter

    def structure(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)  # noqa: UP007


@dataclass
class Buffers:
    """The open documents of a test session, editable by the server."""

    session: Session
    texts: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    received: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    refuse: bool = False  # answer applied=false, as a user who declines

    def __post_init__(self) -> None:
        _tell_actions_from_commands(self.session)

        @self.session.client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return self.apply(params)

    def open(self, path: Path, text: str | None = None) -> None:
        text = path.read_text() if text is None else text
        self.texts[uri(path)] = text
        self.versions[uri(path)] = 1
        self.session.open(path, text)

    def type(self, path: Path, text: str) -> None:
        """The user edits the buffer (not saved)."""
        key = uri(path)
        self.versions[key] += 1
        self.texts[key] = text
        self.session.change(path, text, self.versions[key])

    def text(self, path: Path) -> str:
        return self.texts[uri(path)]

    def save(self, path: Path) -> None:
        """The user saves the buffer: the file holds it, the server is told."""
        path.write_text(self.text(path), encoding="utf-8")
        self.session.client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(path)))
        )

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        """Apply an edit as the editor does (also for a resolved action's edit)."""
        self.received.append(params)
        if self.refuse:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="declined")
        edit = params.edit
        per_uri: list[tuple[str, int | None, list[types.TextEdit]]] = []
        for target, edits in (edit.changes or {}).items():
            per_uri.append((target, None, list(edits)))
        for change in edit.document_changes or ():
            if not isinstance(change, types.TextDocumentEdit):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="no file ops")
            plain = [
                types.TextEdit(range=e.range, new_text=e.new_text)
                for e in change.edits
                if not isinstance(e, types.SnippetTextEdit)
            ]
            per_uri.append((change.text_document.uri, change.text_document.version, plain))
        for target, version, _ in per_uri:
            if target not in self.texts:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="not open")
            if version is not None and version != self.versions[target]:
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason=f"{target} is at a newer version"
                )
        for target, _, edits in per_uri:
            new = apply_edits(self.texts[target], edits, self.session.encoding)
            self.texts[target] = new
            self.versions[target] += 1
            self.session.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(
                        version=self.versions[target], uri=target
                    ),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)],
                )
            )
        return types.ApplyWorkspaceEditResult(applied=True)
