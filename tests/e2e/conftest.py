"""End-to-end harness: the real ``acp-lsp`` over stdio against the real backend.

Each test gets a fresh data dir. The test process reaches the same backend
(in-process on that data dir, or the ``acp-backend serve`` subprocess in
server mode) to register resources and to put events in its log; the
server under test sees them exactly as it would see a CLI or another client.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from acp_backend.facade import BackendFacade, create_facade
from acp_client.events import ValidationResultEvent
from acp_client.models import Finding, Location, Resource, ValidationMode, ValidationResult
from acp_client.paths import path_to_uri

PROFILES = ["visual-studio-code", "neovim@v0.7", "neovim@v0.11", "emacs"]
TIMEOUT = 10.0

_ids = count(1)


def result(
    resource: Resource,
    validation: str,
    mode: ValidationMode,
    passed: bool,
    findings: Sequence[Finding] = (),
    *,
    message: str = "",
    declared_at: Location | None = None,
    started_at: datetime | None = None,
) -> ValidationResult:
    now = datetime.now(UTC)
    n = next(_ids)
    return ValidationResult(
        id=f"result-{n}",
        validation=validation,
        mode=mode,
        passed=passed,
        message=message,
        resource_id=resource.id,
        run_id=f"run-{n}",
        started_at=started_at or now,
        finished_at=now,
        findings=tuple(findings),
        declared_at=declared_at,
    )


def finding(path: str, line: int, character: int, message: str, **more: Any) -> Finding:
    return Finding(
        location=Location(path=path, line=line, character=character, **more), message=message
    )


@dataclass
class Backend:
    """The test's own handle on the backend serving ``data_dir``."""

    data_dir: Path
    facade: BackendFacade

    async def register(self, path: Path, name: str | None = None) -> Resource:
        params = {"path": str(path)} | ({"name": name} if name else {})
        return Resource.model_validate(await self.facade.dispatch("resource.register", params))

    def publish(self, result: ValidationResult) -> None:
        self.facade.context.events.publish(ValidationResultEvent, result=result)

    def publish_raw(self, method: str, params: dict[str, Any]) -> None:
        """An event that skips validation: what a broken backend might send."""
        with sqlite3.connect(self.facade.context.store.path) as conn:
            conn.execute(
                "INSERT INTO events (method, params, at) VALUES (?, ?, ?)",
                (method, json.dumps(params), datetime.now(UTC).isoformat()),
            )


@dataclass
class ServerProcess:
    """``acp-backend serve`` on 127.0.0.1, restartable on the same data dir."""

    data_dir: Path
    process: subprocess.Popen[bytes] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def start(self) -> None:
        backend_file = self.data_dir / "backend.json"
        backend_file.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "acp_backend.cli",
                "--data-dir",
                str(self.data_dir),
                "serve",
                "--port",
                "0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if backend_file.exists():
                try:
                    self.info = json.loads(backend_file.read_text())
                    return
                except ValueError:
                    pass  # half-written; it is written atomically, but be patient
            time.sleep(0.05)
        raise RuntimeError("acp-backend serve did not write backend.json")

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()
            self.process = None


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


LspFactory = Callable[..., "asyncio.Future[LanguageClient]"]


@pytest_asyncio.fixture
async def lsp(data_dir: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start ``acp-lsp`` and initialise it like the given editor would."""
    started: list[LanguageClient] = []

    async def start(
        profile: str | types.ClientCapabilities,
        folders: Sequence[Path] = (),
        *,
        options: object = None,
        configuration: dict[str, Any] | None = None,
        args: Sequence[str] = (),
        env: dict[str, str] | None = None,
    ) -> LanguageClient:
        client = make_test_lsp_client()
        if configuration is not None:
            client.set_configuration(configuration)
        command = [
            sys.executable,
            "-m",
            "lsp_server",
            "--data-dir",
            str(data_dir),
            "--log-level",
            "DEBUG",
            *args,
        ]
        await client.start_io(*command, env={**os.environ, **(env or {})})
        started.append(client)
        capabilities = client_capabilities(profile) if isinstance(profile, str) else profile
        await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                workspace_folders=[
                    types.WorkspaceFolder(uri=path_to_uri(str(f)), name=f.name) for f in folders
                ],
                root_uri=path_to_uri(str(folders[0])) if folders else None,
                initialization_options=options,
            )
        )
        await wait_for(lambda: connected(client))
        return client

    yield start
    for client in started:
        try:
            await asyncio.wait_for(client.shutdown_session(), 5)
        except (TimeoutError, RuntimeError):
            pass
        await client.stop()


async def wait_for(condition: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def connected(client: LanguageClient) -> bool:
    return any("ACP backend" in m.message for m in client.log_messages)


def uri(path: Path) -> str:
    return path_to_uri(str(path))


def open_document(client: LanguageClient, path: Path, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri(path), language_id="python", version=version, text=path.read_text()
            )
        )
    )
