"""One language server under test, driven through pytest-lsp as one editor.

Every byte the server writes to stdout is recorded, so the suite can tell a
clean stream of LSP frames from one with stray output in it; every
``LspSpecificationWarning`` pytest-lsp raises is recorded too, and turned
into a failure of the check during which it arose.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
import warnings
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from cattrs import Converter
from lsprotocol import types
from pygls.io_ import run_async
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, LspSpecificationWarning
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from acp_client.paths import path_to_uri
from acp_conformance.profiles import Profile, encoding_name

T = TypeVar("T")
log = logging.getLogger(__name__)
HEADER = re.compile(rb"([A-Za-z-]+): *([^\r\n]*)\r\n")


def spec_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    """pytest-lsp's specification warnings among ``caught``, first lines only."""
    return [str(w.message).split("\n")[0] for w in caught if w.category is LspSpecificationWarning]


def kit_converter() -> Converter:
    """pygls's converter, reading code actions right: lsprotocol takes anything
    with a ``command`` field for a Command, so a CodeAction that carries a
    command would come back as a Command whose id is the dict's repr."""
    converter: Converter = default_converter()  # type: ignore[no-untyped-call]

    def command_or_action(raw: Any, _: object) -> types.Command | types.CodeAction:
        if isinstance(raw.get("command"), str):
            return converter.structure(raw, types.Command)
        return converter.structure(raw, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, command_or_action)
    return converter


NOT_REGISTERED = "is not in a registered resource"


def mismatched_backend(said: list[str]) -> str:
    """Why a server may show nothing: it says the kit's scratch folder is not
    registered, so it reached another backend than the kit's."""
    if not any(NOT_REGISTERED in message for message in said):
        return ""
    return (
        "the server under test says the kit's scratch folder is not registered: it "
        "reached another backend than the kit's. Give it the kit's backend in "
        "--server-command: '--data-dir {data_dir}' (local mode) or "
        "'--acp {acp} --token-file {token_file}' (server mode). "
    )


class RecordingReader:
    """The server's stdout as pygls reads it, with every byte kept."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self.data = bytearray()

    async def readline(self) -> bytes:
        line = await self._reader.readline()
        self.data += line
        return line

    async def readexactly(self, n: int) -> bytes:
        chunk = await self._reader.readexactly(n)
        self.data += chunk
        return chunk


def frame_problems(data: bytes) -> list[str]:
    """Everything on an LSP stdout that is not a ``Content-Length`` frame of JSON."""
    found: list[str] = []
    at = 0
    while at < len(data):
        start, length = at, None
        while (match := HEADER.match(data, at)) is not None:
            if match.group(1).lower() == b"content-length" and match.group(2).isdigit():
                length = int(match.group(2))
            at = match.end()
        if length is None or not data.startswith(b"\r\n", at):
            end = data.find(b"Content-Length:", start + 1)
            end = len(data) if end < 0 else end
            found.append(f"not an LSP frame at byte {start}: {bytes(data[start:end])[:80]!r}")
            at = end
            continue
        body = data[at + 2 : at + 2 + length]
        at += 2 + length
        try:
            json.loads(body)
        except ValueError:
            found.append(f"frame at byte {start} is not JSON: {bytes(body)[:80]!r}")
    return found


class KitClient(LanguageClient):
    """pytest-lsp's client, reading the server's stdout through a recorder."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.recorder: RecordingReader | None = None
        self.stderr_text = bytearray()

    async def start_io(self, cmd: str, *args: str, **kwargs: Any) -> None:
        server = await asyncio.create_subprocess_exec(
            cmd,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            **kwargs,
        )
        assert server.stdin is not None and server.stdout is not None
        self.recorder = RecordingReader(server.stdout)
        self.protocol.set_writer(server.stdin)
        connection = asyncio.create_task(
            run_async(
                stop_event=self._stop_event,
                reader=self.recorder,
                protocol=self.protocol,
                logger=log,
                error_handler=self.report_server_error,
            )
        )
        self._server = server
        exited = self._server_exit()  # type: ignore[no-untyped-call]
        self._async_tasks.extend(
            [connection, asyncio.create_task(exited), asyncio.create_task(self._err())]
        )

    async def _err(self) -> None:
        assert self._server is not None and self._server.stderr is not None
        while chunk := await self._server.stderr.read(4096):
            self.stderr_text += chunk
            del self.stderr_text[:-8192]  # the tail is what explains a failure


@dataclass
class Session:
    """A started server, initialised as ``profile``, and what it sent."""

    client: KitClient
    profile: Profile
    runner: asyncio.Runner
    timeout: float
    root: Path
    unregistered: Path | None
    capabilities: types.ServerCapabilities = field(default_factory=types.ServerCapabilities)
    spec_warnings: list[str] = field(default_factory=list)
    requests: list[tuple[str, Any]] = field(default_factory=list)
    exited: int | None = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine``; an LSP specification warning meanwhile fails the check."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LspSpecificationWarning)
            try:
                result = self.runner.run(coroutine)
            finally:
                new = spec_warnings(caught)
                self.spec_warnings += new
        assert not new, f"LSP specification violated: {'; '.join(new[:3])}"
        return result

    @property
    def encoding(self) -> str:
        chosen = self.capabilities.position_encoding
        return "utf-16" if chosen is None else encoding_name(chosen)

    @property
    def pulls(self) -> bool:
        """Diagnostics come by pull: the client can pull and the server offers it."""
        return self.profile.can_pull and self.capabilities.diagnostic_provider is not None

    async def shown(self, path: Path) -> list[types.Diagnostic]:
        """What the editor shows for ``path`` now, by pull or by push."""
        uri = path_to_uri(str(path))
        if not self.pulls:
            return list(self.client.diagnostics.get(uri, ()))
        provider = self.capabilities.diagnostic_provider
        identifier = getattr(provider, "identifier", None)
        report = await self.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri), identifier=identifier
            )
        )
        items = getattr(report, "items", None)
        assert items is not None, f"textDocument/diagnostic answered {type(report).__name__}"
        return list(items)

    async def wait_shown(
        self, path: Path, condition: Callable[[list[types.Diagnostic]], bool], what: str
    ) -> list[types.Diagnostic]:
        deadline = time.monotonic() + self.timeout
        while True:
            shown = await self.shown(path)
            if condition(shown):
                return shown
            if time.monotonic() > deadline:
                brief = [f"{d.source} {d.range.start.line}: {d.message}" for d in shown]
                said = f"; the server said: {self.said()}" if self.said() else ""
                raise AssertionError(
                    mismatched_backend(self.said())
                    + f"{what} not shown on {path.name} in time; shown: {brief}{said}"
                )
            await asyncio.sleep(0.1)

    async def wait_until(self, probe: Callable[[], T], what: str) -> T:
        """``probe()`` once it is truthy, else its last value after the timeout."""
        deadline = time.monotonic() + self.timeout
        while True:
            value = probe()
            if value or time.monotonic() > deadline:
                return value
            await asyncio.sleep(0.1)

    def open(self, path: Path, language: str) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=path_to_uri(str(path)),
                    language_id=language,
                    version=1,
                    text=path.read_text("utf-8"),
                )
            )
        )

    def said(self) -> list[str]:
        """Every message shown to the user (showMessage and showMessageRequest)."""
        shown = [m.message for m in self.client.messages]
        return shown + [str(p.message) for m, p in self.requests if m == "showMessageRequest"]

    async def shutdown(self) -> int | None:
        """shutdown, exit, and the process's exit status (None: it did not exit)."""
        await asyncio.wait_for(self.client.shutdown_async(None), self.timeout)
        self.client.exit(None)
        server = self.client._server
        assert server is not None
        with contextlib.suppress(TimeoutError):
            self.exited = await asyncio.wait_for(server.wait(), 5.0)
        return self.exited

    def stdout_problems(self) -> list[str]:
        recorder = self.client.recorder
        return [] if recorder is None else frame_problems(bytes(recorder.data))

    def stderr_tail(self) -> str:
        return bytes(self.client.stderr_text[-600:]).decode("utf-8", "replace")

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.client.stop()  # type: ignore[no-untyped-call]


def _recording(session_requests: list[tuple[str, Any]], name: str, answer: object) -> Any:
    def handler(_: LanguageClient, params: Any) -> object:
        session_requests.append((name, params))
        return answer

    return handler


async def start(
    argv: Sequence[str],
    profile: Profile,
    *,
    timeout_s: float,
    folders: Sequence[Path],
    root: Path,
) -> tuple[KitClient, list[tuple[str, Any]], types.InitializeResult]:
    """Start ``argv``, initialise it as ``profile`` would, open nothing yet."""
    client = KitClient(converter_factory=kit_converter)
    requests: list[tuple[str, Any]] = []
    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.WINDOW_SHOW_MESSAGE_REQUEST: _recording(requests, "showMessageRequest", None),
            types.WORKSPACE_APPLY_EDIT: _recording(
                requests, "applyEdit", types.ApplyWorkspaceEditResult(applied=False)
            ),
        },
    )
    await client.start_io(argv[0], *argv[1:], cwd=str(root))
    params = types.InitializeParams(
        capabilities=profile.capabilities,
        client_info=types.ClientInfo(name=f"acp-conformance ({profile.name})"),
        root_uri=path_to_uri(str(root)),
        root_path=str(root),
        workspace_folders=[types.WorkspaceFolder(path_to_uri(str(f)), f.name) for f in folders]
        if profile.workspace_folders
        else None,
    )
    try:
        answer = await asyncio.wait_for(client.initialize_session(params), timeout_s)
    except TimeoutError:
        recorder = client.recorder
        noise = frame_problems(bytes(recorder.data)) if recorder else []
        await client.stop()  # type: ignore[no-untyped-call]
        raise AssertionError(
            f"initialize not answered in {timeout_s:g} s; stdout: {noise or 'nothing'}"
        ) from None
    return client, requests, answer
