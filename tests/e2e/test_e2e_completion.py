"""Completion over the real server and backend, in every editor profile:
``acp.toml``'s presets and keys, a finding's code after its tool's
suppression comment, and "Suppress *code* on this line" applied — all
answered without a backend call per keystroke."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.models import ValidationMode
from tests.e2e.editing import Buffers
from tests.e2e.test_e2e_code_actions import actions_at, choose
from tests.support.factories import finding, result
from tests.support.lsp_harness import (
    PROFILES_AND_MODES,
    WAIT,
    Backend,
    Session,
    Starter,
    project,
    uri,
)
from tests.support.recording_facade import recorded_calls
from tests.support.waiting import until

RECORDING = ["--facade", "tests.support.recording_facade:create_facade"]
DECLARED = '[[validations]]\npreset = "ruff"\n'


async def complete(
    session: Session, path: Path, line: int, character: int
) -> list[types.CompletionItem]:
    answer = await session.client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri(path)),
            position=types.Position(line, character),
        )
    )
    if answer is None:
        return []
    return list(answer.items if isinstance(answer, types.CompletionList) else answer)


async def completed_soon(
    session: Session, path: Path, line: int, character: int
) -> list[types.CompletionItem]:
    """The items once there are any: the schema comes with the resource's listing."""
    deadline = time.monotonic() + WAIT
    while not (items := await complete(session, path, line, character)):
        assert time.monotonic() < deadline, "nothing was ever completed"
        await asyncio.sleep(0.05)
    return items


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_acp_toml_completes_presets_and_keys(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root = project(tmp_path / "app", {"acp.toml": DECLARED, "a.py": "x = 1\n"})
    await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    provider = session.capabilities.completion_provider
    assert provider is not None and '"' in (provider.trigger_characters or ())
    typing = '[[validations]]\npreset = "'
    session.open(root / "acp.toml", typing, language="toml")
    await session.wait_in_play(root)
    items = await completed_soon(session, root / "acp.toml", 1, 10)
    labels = {item.label for item in items}
    assert {"ruff", "mypy", "eslint", "shellcheck"} <= labels
    (ruff,) = [item for item in items if item.label == "ruff"]
    assert ruff.detail is not None and ruff.detail.startswith("ruff check")  # ruff is installed
    session.change(root / "acp.toml", '[[validations]]\npreset = "ruff"\nmo', 2)
    keys = {item.label for item in await complete(session, root / "acp.toml", 2, 2)}
    assert "mode" in keys and "preset" not in keys


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.11", "emacs"])
async def test_a_findings_code_after_its_tools_comment_then_suppressed_for_real(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    source = "import os\nx = 1\n"
    root = project(tmp_path / "app", {"acp.toml": DECLARED, "a.py": source})
    resource = await backend.register(root)
    session = await lsp(profile, [root], args=RECORDING)
    buffers = Buffers(session)
    buffers.open(root / "a.py")
    await session.wait_in_play(root)
    flagged = finding("a.py", 0, 7, "`os` imported but unused", end_line=0, end_character=9)
    other = finding("a.py", 1, 0, "line too long", code="E501")
    shown = result(
        "ruff",
        ValidationMode.REQUIRED,
        False,
        [replace(flagged, code="F401", rule_description="unused-import"), other],
        resource=resource,
    )
    backend.publish(shown)
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 2)

    # the opening's listing ends with plan.list: count from after it
    await until(lambda: any(c["method"] == "plan.list" for c in recorded_calls(backend.data_dir)))
    before = len(recorded_calls(backend.data_dir))
    typed = "import os  # noqa: "
    for n in range(len("import os  "), len(typed) + 1):  # keystroke by keystroke
        buffers.type(root / "a.py", typed[:n] + "\nx = 1\n")
        items = await complete(session, root / "a.py", 0, n)
    assert [item.label for item in items] == ["F401", "E501"]  # its line's first
    assert items[0].detail == "ruff: unused-import"
    assert len(recorded_calls(backend.data_dir)) == before  # not one backend call

    buffers.type(root / "a.py", source)  # back as it was: now the action
    (suppress,) = [
        a for a in await actions_at(session, root / "a.py", 0, 8) if a.title.startswith("Suppress")
    ]
    assert suppress.title == "Suppress F401 on this line (ruff)"
    await choose(buffers, suppress)
    assert buffers.text(root / "a.py") == "import os  # noqa: F401\nx = 1\n"


async def test_no_completion_and_no_error_outside_a_resource_or_without_the_schema(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    """A folder no resource holds completes nothing; a backend without
    ``validation.schema`` completes no acp.toml and says so once, in the log."""
    root = project(tmp_path / "app", {"acp.toml": DECLARED})
    loose = project(tmp_path / "loose", {"acp.toml": DECLARED, "a.py": "x  # noqa: \n"})
    await backend.register(root)
    schemaless = ["--facade", "tests.support.recording_facade:create_schemaless_facade"]
    session = await lsp("visual-studio-code", [root, loose], args=schemaless)
    session.open(loose / "a.py")
    session.open(root / "acp.toml", '[[validations]]\npreset = "', language="toml")
    await session.wait_in_play(root)
    await until(lambda: any("validation.schema" in m.message for m in session.client.log_messages))
    assert await complete(session, loose / "a.py", 0, 11) == []
    assert await complete(session, root / "acp.toml", 1, 10) == []
    said = [m.message for m in session.client.log_messages if "validation.schema" in m.message]
    assert len(said) == 1 and "no completion" in said[0]
    assert not [m for m in session.messages() if "validation.schema" in m]  # a log line only


@pytest.mark.parametrize("profile", ["neovim@v0.11", "visual-studio-code"])
async def test_completion_asked_right_after_opening_waits_for_the_backend(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    """Neovim asks at the first trigger character, maybe before the backend
    answered; a null then would show no menu until the next trigger."""
    root = project(tmp_path / "app", {"acp.toml": DECLARED})
    await backend.register(root)
    session = await lsp(profile, [root])
    session.open(root / "acp.toml", '[[validations]]\npreset = "', language="toml")
    items = await complete(session, root / "acp.toml", 1, 10)  # at once
    assert {"ruff", "mypy"} <= {item.label for item in items}
