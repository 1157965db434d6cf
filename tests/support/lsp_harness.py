"""End-to-end harness: the real ``acp-lsp`` over stdio against the real backend.

Each test gets a fresh data dir. The test process reaches the same backend
(in-process on that data dir) to register resources and to append events to
its log; the server under test sees them exactly as it sees a CLI or another
client's activity. In server mode the server under test talks HTTP + SSE to
an ``acp-backend serve`` subprocess on 127.0.0.1 instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from acp_backend.facade import BackendFacade, create_facade
from acp_backend.ids import new_ulid
from acp_client.events import Event, ValidationResultEvent
from acp_client.models import Resource, ValidationResult
from acp_client.paths import path_to_uri
from acp_conformance.profiles import with_pull
from tests.support.servers import ServerProcess
from tests.support.waiting import until

REPO = Path(__file__).resolve().parents[2]
PULL = "vscode-pull"
PLAIN = "plaintext-hover"
RESOLVE = "vscode-symbol-resolve"
PROFILES = ["visual-studio-code", "neovim@v0.7", "neovim@v0.11", "emacs", PULL]
# Every profile in local mode; push and pull again through the HTTP server.
PROFILES_AND_MODES = [
    *((profile, "local") for profile in PROFILES),
    ("visual-studio-code", "server"),
    (PULL, "server"),
]
WAIT = 10.0


def capabilities_for(profile: str) -> types.ClientCapabilities:
    """A recorded profile; ``vscode-pull`` is VS Code as of 1.7x: it pulls
    diagnostics and honours ``workspace/diagnostic/refresh``; ``plaintext-hover``
    is Neovim 0.7 taking only plain text in hovers; ``vscode-symbol-resolve``
    resolves workspace symbols' ranges."""
    if profile == PLAIN:  # a client whose hovers show plain text only
        base = client_capabilities("neovim@v0.7")
        assert base.text_document is not None
        hover = types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText])
        return attrs.evolve(base, text_document=attrs.evolve(base.text_document, hover=hover))
    if profile == RESOLVE:  # VS Code as of 1.7x: symbols' ranges resolved when opened
        base = client_capabilities("visual-studio-code")
        assert base.workspace is not None and base.workspace.symbol is not None
        symbol = attrs.evolve(
            base.workspace.symbol,
            resolve_support=types.ClientSymbolResolveOptions(properties=["location.range"]),
        )
        return attrs.evolve(base, workspace=attrs.evolve(base.workspace, symbol=symbol))
    if profile != PULL:
        return client_capabilities(profile)
    return with_pull(client_capabilities("visual-studio-code"))


@dataclass
class Backend:
    """The test's own handle on the backend of ``data_dir``."""

    data_dir: Path
    facade: BackendFacade

    async def register(self, path: Path) -> Resource:
        return Resource.model_validate(
            await self.facade.dispatch("resource.register", {"path": str(path)})
        )

    def publish(self, result: ValidationResult) -> None:
        """Store a result and announce it, as a validator run does."""
        self.facade.services.store.insert_result(result)
        self.facade.services.events.publish(ValidationResultEvent, result=result)

    def publish_event(self, event_type: type[Event], **fields: Any) -> None:
        self.facade.services.events.publish(event_type, **fields)

    def store_raw_result(self, resource: Resource, validation: str, body: str) -> None:
        """A stored result whose body is not a result: a corrupt row."""
        with contextlib.closing(sqlite3.connect(self.facade.services.store.path)) as conn, conn:
            conn.execute(
                "INSERT INTO validation_results (id, resource_id, validation, plan_id, run_id,"
                " finished_at, passed, mode, body) VALUES (?, ?, ?, NULL, 'run', ?, 0,"
                " 'required', ?)",
                (new_ulid(), resource.id, validation, datetime.now(UTC).isoformat(), body),
            )

    def publish_raw(self, method: str, params: dict[str, Any]) -> None:
        """An event that skips the model: what a broken backend might send."""
        with contextlib.closing(sqlite3.connect(self.facade.services.store.path)) as conn, conn:
            conn.execute(
                "INSERT INTO events (method, params, at) VALUES (?, ?, ?)",
                (method, json.dumps(params), datetime.now(UTC).isoformat()),
            )


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "data"
    directory.mkdir()
    return directory


@pytest_asyncio.fixture
async def backend(data_dir: Path) -> AsyncIterator[Backend]:
    facade = create_facade(data_dir)
    yield Backend(data_dir, facade)
    await facade.aclose()


@pytest.fixture
def server_process(data_dir: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(data_dir)
    yield server
    server.stop()


@dataclass
class Session:
    """A started ``acp-lsp`` and what its editor has received."""

    client: LanguageClient
    profile: str
    capabilities: types.ServerCapabilities = field(default_factory=types.ServerCapabilities)
    published: list[tuple[float, types.PublishDiagnosticsParams]] = field(default_factory=list)

    @property
    def encoding(self) -> str:
        return str(self.capabilities.position_encoding or "utf-16")

    @property
    def pull(self) -> bool:
        return self.profile == PULL

    async def diagnostics(self, path: Path) -> list[types.Diagnostic]:
        """What the editor shows for ``path`` now, by push or by pull."""
        if not self.pull:
            return list(self.client.diagnostics.get(uri(path), ()))
        report = await self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri(path)))
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        return list(report.items)

    async def wait_diagnostics(
        self, path: Path, condition: Callable[[list[types.Diagnostic]], bool]
    ) -> list[types.Diagnostic]:
        deadline = time.monotonic() + WAIT
        while True:
            shown = await self.diagnostics(path)
            if condition(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"diagnostics of {path.name} never matched: {shown}")
            await asyncio.sleep(0.05)

    def open(self, path: Path, text: str | None = None, language: str = "python") -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri(path),
                    language_id=language,
                    version=1,
                    text=path.read_text() if text is None else text,
                )
            )
        )

    async def wait_in_play(self, root: Path) -> None:
        """Until the server has taken up the resource at ``root``."""
        await until(
            lambda: any(
                f"in play: {root.name} ({root})" in m.message for m in self.client.log_messages
            )
        )

    async def wait_listed(self, path: Path) -> None:
        """Until the server's first resync is over (every resource in play
        listed; it ends any hold of runs it may have missed): a completion
        request waits for that before it is answered. Taking a resource up
        comes before listing it, so ``wait_in_play`` alone is not this."""
        await self.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri(path)),
                position=types.Position(line=0, character=0),
            )
        )

    def change(self, path: Path, text: str, version: int) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(version=version, uri=uri(path)),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def save(self, path: Path, text: str, version: int) -> None:
        """What an editor does: the buffer changes, the file is written, didSave."""
        self.change(path, text, version)
        path.write_text(text, encoding="utf-8")
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(path)))
        )

    def messages(self, kind: types.MessageType | None = None) -> list[str]:
        return [m.message for m in self.client.messages if kind is None or m.type == kind]


Starter = Callable[..., Awaitable[Session]]


@pytest_asyncio.fixture
async def lsp(data_dir: Path, server_process: ServerProcess) -> AsyncIterator[Starter]:
    """``await lsp(profile, folders, ...)``: start ``acp-lsp`` and initialise
    it as that editor would (it connects to the backend in the background).
    ``mode="server"``: through ``acp-backend serve`` (HTTP + SSE, token file)."""
    sessions: list[Session] = []

    async def start(
        profile: str,
        folders: Sequence[Path] = (),
        *,
        mode: str = "local",
        options: object = None,
        configuration: dict[str, Any] | None = None,
        args: Sequence[str] = (),
    ) -> Session:
        if mode == "server":
            server_process.start()
            remote = ["--acp", server_process.url, "--token-file", str(server_process.token_file)]
            args = [*remote, *args]
        client = LanguageClient(converter_factory=default_converter)
        session = Session(client, profile)

        def publish(_: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            session.published.append((time.monotonic(), params))
            client.diagnostics[params.uri] = params.diagnostics

        register_lsp_features(
            client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish}
        )
        if configuration is not None:
            client.set_configuration(configuration)
        command = [sys.executable, "-m", "lsp_server", "--data-dir", str(data_dir), *args]
        await client.start_io(*command, cwd=REPO)  # --facade may name a module of tests/
        sessions.append(session)
        answer = await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities_for(profile),
                workspace_folders=[
                    types.WorkspaceFolder(uri=uri(folder), name=folder.name) for folder in folders
                ],
                root_uri=uri(folders[0]) if folders else None,
                initialization_options=options,
            )
        )
        session.capabilities = answer.capabilities
        return session

    yield start
    for session in sessions:
        with contextlib.suppress(TimeoutError, RuntimeError):
            await asyncio.wait_for(session.client.shutdown_session(), 5)
        await session.client.stop()


def connected(client: LanguageClient, times: int = 1) -> bool:
    return sum("ACP backend" in m.message for m in client.log_messages) >= times


def uri(path: Path) -> str:
    return path_to_uri(str(path))


def project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root
