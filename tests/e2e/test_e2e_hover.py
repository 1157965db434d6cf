"""Hover end to end: a finding with its rule, the enclosing function, nothing on
a plain line; emoji and CJK before the cursor in every position encoding;
shared and cancelled backend calls; no backend, no folder: null, quickly."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.models import Finding, Location, Plan, ValidationMode
from acp_client.text import digest
from tests.e2e.test_e2e_demo import column
from tests.support.factories import result
from tests.support.lsp_harness import (
    PLAIN,
    PROFILES,
    PROFILES_AND_MODES,
    Backend,
    ServerProcess,
    Session,
    Starter,
    connected,
    project,
    uri,
)
from tests.support.plans import settled
from tests.support.recording_facade import recorded_calls, release_inspect
from tests.support.waiting import until

HELD = ["--facade", "tests.support.recording_facade:create_held_inspect_facade"]
SOURCE = '''"""Greetings."""


def greet(name: str) -> str:
    """Say hello."""
    banner = "👋 你好"; return f"{banner} {nmae}"
'''
LINE = 5
TEXT = SOURCE.splitlines()[LINE]
START = TEXT.index("nmae")  # code points: after an emoji and two CJK characters
NMAE = Finding(
    location=Location(
        path="hello.py", line=LINE, character=START, end_line=LINE, end_character=START + 4
    ),
    message="Undefined name `nmae`",
    code="F821",
    rule_description="undefined-name",
    help_uri="https://docs.astral.sh/ruff/rules/undefined-name",
)


async def hover(session: Session, path: Path, line: int, character: int) -> str | None:
    answer = await session.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri(path)),
            position=types.Position(line, character),
        )
    )
    if answer is None:
        return None
    assert isinstance(answer.contents, types.MarkupContent)
    return answer.contents.value


async def started(
    backend: Backend,
    lsp: Starter,
    tmp_path: Path,
    profile: str,
    mode: str = "local",
    **more: object,
) -> tuple[Session, Path]:
    root = project(tmp_path / "proj", {"hello.py": SOURCE})
    resource = await backend.register(root)
    backend.publish(result("ruff", ValidationMode.REQUIRED, False, [NMAE], resource=resource))
    session = await lsp(profile, [root], mode=mode, **more)  # type: ignore[arg-type]
    session.open(root / "hello.py")
    await session.wait_diagnostics(root / "hello.py", lambda shown: len(shown) == 1)
    return session, root / "hello.py"


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_hover_on_a_finding_in_a_function_and_on_a_plain_line(
    backend: Backend, lsp: Starter, tmp_path: Path, profile: str, mode: str
) -> None:
    session, path = await started(backend, lsp, tmp_path, profile, mode)
    assert session.capabilities.hover_provider
    encoding = session.encoding
    on_word = await hover(session, path, LINE, column(TEXT, START, encoding))
    assert on_word is not None
    assert "**Error** from **ruff** (required)" in on_word
    assert "Undefined name `nmae`" in on_word
    assert "[F821](<https://docs.astral.sh/ruff/rules/undefined-name>) undefined-name" in on_word
    assert "Found 20" in on_word and " UTC by run " in on_word
    assert "def greet(name: str) -> str" in on_word and "Say hello." in on_word
    # Its last character still, the one before not: exact in every encoding.
    end = await hover(session, path, LINE, column(TEXT, START + 4, encoding))
    before = await hover(session, path, LINE, column(TEXT, START - 1, encoding))
    assert end is not None and "nmae" in end
    assert before is not None and "nmae" not in before and "def greet" in before
    assert await hover(session, path, 1, 0) is None  # a plain line: no popup


async def test_a_client_without_markdown_gets_plain_text(
    backend: Backend, lsp: Starter, tmp_path: Path
) -> None:
    session, path = await started(backend, lsp, tmp_path, PLAIN)
    answer = await session.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri(path)),
            position=types.Position(LINE, column(TEXT, START, session.encoding)),
        )
    )
    assert answer is not None and isinstance(answer.contents, types.MarkupContent)
    assert answer.contents.kind == types.MarkupKind.PlainText
    assert "Error from ruff (required)" in answer.contents.value
    assert "**" not in answer.contents.value


async def test_the_unsaved_buffer_is_what_hover_describes(
    backend: Backend, lsp: Starter, tmp_path: Path
) -> None:
    session, path = await started(backend, lsp, tmp_path, "neovim@v0.11")
    assert "def greet" in (await hover(session, path, 4, 0) or "")
    session.change(path, "\n\n\n\nclass Draft:\n    pass\n", version=2)
    assert "class Draft" in (await hover(session, path, 4, 0) or "")


async def test_fifty_identical_hovers_make_one_backend_call(
    backend: Backend, lsp: Starter, tmp_path: Path, data_dir: Path
) -> None:
    session, path = await started(backend, lsp, tmp_path, "neovim@v0.11", args=HELD)
    position = column(TEXT, START, session.encoding)
    hovers = [asyncio.ensure_future(hover(session, path, LINE, position)) for _ in range(50)]
    await until(lambda: any(c["method"] == "context.inspect" for c in recorded_calls(data_dir)))
    await asyncio.sleep(0.2)  # every request has arrived and is waiting
    release_inspect(data_dir)
    answers = await asyncio.gather(*hovers)
    assert len(set(answers)) == 1 and answers[0] is not None and "nmae" in answers[0]
    assert [c["method"] for c in recorded_calls(data_dir)].count("context.inspect") == 1
    # The line is cached now: hovering along it asks nothing more.
    await hover(session, path, LINE, 0)
    assert [c["method"] for c in recorded_calls(data_dir)].count("context.inspect") == 1


async def test_cancel_request_cancels_the_backend_call(
    backend: Backend, lsp: Starter, tmp_path: Path, data_dir: Path
) -> None:
    session, path = await started(backend, lsp, tmp_path, "visual-studio-code", args=HELD)
    params = types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri(path)), position=types.Position(LINE, 0)
    )
    answer = asyncio.ensure_future(
        session.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_HOVER, params, msg_id="hover-1"
        )
    )
    await until(lambda: any(c["method"] == "context.inspect" for c in recorded_calls(data_dir)))
    session.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="hover-1"))
    await until(lambda: any(c["method"] == "cancelled" for c in recorded_calls(data_dir)))
    with pytest.raises(Exception, match="cancel"):
        await answer


async def test_a_folder_that_is_not_registered_answers_null_at_once(
    backend: Backend, lsp: Starter, tmp_path: Path
) -> None:
    root = project(tmp_path / "loose", {"hello.py": SOURCE})
    session = await lsp("neovim@v0.11", [root])
    await until(lambda: connected(session.client))
    session.open(root / "hello.py")
    started_at = time.monotonic()
    assert await hover(session, root / "hello.py", 4, 0) is None
    assert time.monotonic() - started_at < 1.0


async def test_the_backend_down_answers_null_quickly(
    backend: Backend, lsp: Starter, tmp_path: Path, server_process: ServerProcess
) -> None:
    session, path = await started(backend, lsp, tmp_path, "visual-studio-code", "server")
    server_process.kill()
    started_at = time.monotonic()
    assert await hover(session, path, 4, 0) is None
    assert time.monotonic() - started_at < 1.5


@pytest.mark.parametrize(
    ("profile", "mode"),
    [("neovim@v0.11", "local"), ("emacs", "local"), ("visual-studio-code", "server")],
)
async def test_hover_on_a_line_a_plan_changed_shows_the_plan_and_its_decision(
    backend: Backend, lsp: Starter, tmp_path: Path, profile: str, mode: str
) -> None:
    session, path = await started(backend, lsp, tmp_path, profile, mode)
    fixed = SOURCE.replace("{nmae}", "{name}")
    raw = await backend.facade.dispatch(
        "plan.create",
        {
            "resource": "proj",
            "title": "Fix the typo",
            "author": "ruff-fixer",
            "files": [{"path": "hello.py", "new_text": fixed}],
            "decisions": [
                {"question": "Which name was meant?", "chosen": "name", "confidence": 0.9}
            ],
        },
    )
    plan = await settled(backend.facade, Plan.model_validate(raw).id)
    preview = await backend.facade.dispatch("plan.preview", {"plan_id": plan.id})
    pending = await hover(session, path, LINE, 0)
    assert pending is not None and "**Pending plan** “Fix the typo” by ruff-fixer" in pending
    await backend.facade.dispatch(
        "plan.apply", {"plan_id": plan.id, "expected_hash": preview["plan_hash"]}
    )
    session.change(path, fixed, version=2)  # the editor reloads the file

    async def applied() -> str | None:
        return await hover(session, path, LINE, 0)

    await wait_for_async(lambda text: text is not None and "Applied plan" in text, applied)
    shown = await applied()
    assert shown is not None
    assert "**Applied plan** “Fix the typo” by ruff-fixer, 20" in shown
    assert "Decision: Which name was meant? → **name** (confidence 90%)" in shown
    assert await hover(session, path, LINE - 1, 0) is not None  # the docstring: greet only
    assert "Applied plan" not in (await hover(session, path, LINE - 1, 0) or "")


async def wait_for_async(
    test: Callable[[str | None], bool], get: Callable[[], Awaitable[str | None]]
) -> None:
    deadline = time.monotonic() + 10
    while not test(await get()):
        assert time.monotonic() < deadline, await get()
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_finding_read_on_older_text_shows_where_the_editor_shows_it(
    backend: Backend, lsp: Starter, tmp_path: Path, profile: str
) -> None:
    """Issue 26 (5): hover places a finding of an older text as the
    diagnostics do: moved with its line, gone once its line changed or the
    buffer was saved before the next run answered; never one line off."""
    root = project(tmp_path / "proj", {"hello.py": SOURCE})
    resource = await backend.register(root)
    read = {"hello.py": digest(SOURCE)}
    published = result("ruff", ValidationMode.REQUIRED, False, [NMAE], resource=resource)
    backend.publish(published.model_copy(update={"file_hashes": read}))
    session = await lsp(profile, [root])
    path = root / "hello.py"
    session.open(path)
    await session.wait_diagnostics(path, lambda shown: len(shown) == 1)
    at = column(TEXT, START, session.encoding)

    above = "# a line added above\n" + SOURCE
    session.change(path, above, 2)
    moved = await hover(session, path, LINE + 1, at)
    assert moved is not None and "Undefined name `nmae`" in moved
    assert "the file has changed since, not this line" in moved
    old_place = await hover(session, path, LINE, at)
    assert old_place is None or "nmae`" not in old_place

    edited = above.replace("{nmae}", "{nmae!r}")
    session.change(path, edited, 3)
    on_edited = await hover(session, path, LINE + 1, at)
    assert on_edited is None or "Undefined name" not in on_edited

    session.save(path, above, 4)  # no run answers: the result read the text before
    for line in (LINE, LINE + 1):
        after_save = await hover(session, path, line, at)
        assert after_save is None or "Undefined name" not in after_save, (line, after_save)
