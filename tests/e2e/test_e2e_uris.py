"""Every diagnostic arrives under exactly the URI the editor opened the file
with: 30 files whose names hold spaces, quotes, brackets, ``#``, ``%`` and
non-ASCII, each opened under a spelling a real editor uses (VS Code's,
Neovim's, lower-case escapes, raw UTF-8), all at once, before the backend
has answered — push and pull, local and server mode. Editors match
diagnostics to buffers by URI string: a differently spelled URI shows
nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import quote

import pytest
from lsprotocol import types

from acp_client.models import ValidationMode
from tests.support.factories import finding, result
from tests.support.lsp_harness import PULL, WAIT, Backend, Session, Starter, project, uri
from tests.support.odd_names import ODD_NAMES

NAMES = ODD_NAMES
assert len(NAMES) == 30


def spellings(path: Path) -> list[str]:
    """The URI of ``path`` as different editors write it."""
    text = str(path)
    return [
        uri(path),  # VS Code: every reserved character escaped, upper-case hex
        "file://" + quote(text, safe="/'()!*~"),  # Neovim: RFC 2396's marks left as they are
        "file://" + quote(text, safe="/").lower().replace("file://", ""),  # lower-case escapes
        "file://" + quote(text, safe="/" + "".join(c for c in text if ord(c) > 127)),  # raw UTF-8
    ]


def as_opened(root: Path) -> dict[str, Path]:
    """Each file under one of the spellings, in turn."""
    opened = {}
    for n, name in enumerate(NAMES):
        path = root / name
        spelt = spellings(path)[n % 4]
        if n % 4 == 2:  # lower-casing escapes must leave the path's own letters alone
            spelt = "file://" + _lower_escapes(quote(str(path), safe="/"))
        opened[spelt] = path
    return opened


def _lower_escapes(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "%":
            out.append(text[i : i + 3].lower())
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


async def shown_soon(session: Session, spelt: str) -> list[types.Diagnostic]:
    """What the editor shows under ``spelt`` once it shows anything (or
    nothing, after the harness's wait)."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while not (found := await shown(session, spelt)):
        if asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    return found


async def shown(session: Session, spelt: str) -> list[types.Diagnostic]:
    if not session.pull:
        return list(session.client.diagnostics.get(spelt, ()))
    report = await session.client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(spelt))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    return list(report.items)


@pytest.mark.parametrize(
    ("profile", "mode"),
    [("neovim@v0.11", "local"), (PULL, "local"), ("visual-studio-code", "server")],
)
async def test_every_file_is_shown_under_the_uri_it_was_opened_with(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root = project(tmp_path / "odd names", {name: f"# {name}\n" for name in NAMES})
    resource = await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    opened = as_opened(root)
    assert len(set(opened)) == 30 and len(set(opened.values())) == 30
    for spelt, path in opened.items():  # all at once, before the backend is followed
        session.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(spelt, "python", 1, path.read_text(encoding="utf-8"))
            )
        )
    await session.wait_in_play(root)
    findings = [finding(name, 0, 0, f"in {name}") for name in NAMES]
    backend.publish(result("lint", ValidationMode.REQUIRED, False, findings, resource=resource))
    for spelt, path in opened.items():
        relative = path.relative_to(root).as_posix()
        (diagnostic,) = await shown_soon(session, spelt)
        assert diagnostic.message == f"in {relative}", spelt
    if session.pull:
        report = await session.client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        assert {item.uri for item in report.items} == set(opened)
    else:
        published = {params.uri for _, params in session.published if params.diagnostics}
        assert published == set(opened)  # nothing under another spelling, ever
