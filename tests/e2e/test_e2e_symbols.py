"""Workspace symbols end to end: the demo's validations and resource found by a
partial name, located on their acp.toml lines, kept current; the backend down."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.models import Location, Plan, ValidationMode
from tests.support.factories import finding, result
from tests.support.lsp_harness import (
    REPO,
    RESOLVE,
    Backend,
    ServerProcess,
    Session,
    Starter,
    connected,
    uri,
)
from tests.support.plans import settled
from tests.support.waiting import until

DEMO = REPO / "examples" / "demo"


def declaration_line(root: Path, name: str) -> int:
    """The 0-based line of the ``[[validations]]`` header declaring ``name``."""
    lines = (root / "acp.toml").read_text().splitlines()
    named = lines.index(f'name = "{name}"')
    return max(i for i in range(named) if lines[i] == "[[validations]]")


Symbol = types.WorkspaceSymbol | types.SymbolInformation


async def symbols(session: Session, query: str) -> list[Symbol]:
    """The answer; with full locations the two shapes are the same JSON, so
    the client's converter may read either."""
    found = await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    assert found is not None
    return list(found)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DEMO, tmp_path / "demo"))


@pytest.mark.parametrize(
    ("profile", "mode"),
    [("visual-studio-code", "local"), ("neovim@v0.11", "local"), ("emacs", "server")],
)
async def test_ruff_found_by_a_partial_name_on_its_declaration_line(
    demo: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    resource = await backend.register(demo)
    backend.publish(
        result(
            "ruff",
            ValidationMode.REQUIRED,
            False,
            [finding("greetings.py", 4, 0, "Undefined name `nmae`")],
            declared_at=Location(path="acp.toml", line=declaration_line(demo, "ruff"), character=0),
            resource=resource,
        )
    )
    session = await lsp(profile, [demo], mode=mode)
    assert session.capabilities.workspace_symbol_provider
    await session.wait_in_play(demo)
    found = await symbols(session, "ruf")
    assert [symbol.name for symbol in found] == ["ruff"]
    (ruff,) = found
    assert ruff.kind == types.SymbolKind.Event
    assert ruff.container_name == "demo · required · failed (1 finding)"
    assert isinstance(ruff.location, types.Location)
    assert ruff.location.uri == uri(demo / "acp.toml")
    assert ruff.location.range.start.line == declaration_line(demo, "ruff")
    (todos,) = await symbols(session, "tdo")
    assert todos.name == "todos" and todos.container_name == "demo · informational · not run yet"
    (resource_symbol,) = [s for s in await symbols(session, "dem") if s.name == "demo"]
    assert resource_symbol.kind == types.SymbolKind.Package
    assert isinstance(resource_symbol.location, types.Location)
    assert resource_symbol.location.range.start.line == 0
    assert {s.name for s in await symbols(session, "")} == {"demo", "ruff", "todos"}


async def test_a_new_result_shows_in_the_next_query(
    demo: Path, backend: Backend, lsp: Starter
) -> None:
    resource = await backend.register(demo)
    session = await lsp("neovim@v0.11", [demo])
    await session.wait_in_play(demo)
    (todos,) = await symbols(session, "todos")
    assert todos.container_name == "demo · informational · not run yet"
    backend.publish(result("todos", ValidationMode.INFORMATIONAL, True, resource=resource))

    async def detail() -> str | None:
        return (await symbols(session, "todos"))[0].container_name

    deadline = time.monotonic() + 10
    while await detail() != "demo · informational · passed":
        assert time.monotonic() < deadline, await detail()


async def test_the_backend_down_answers_an_empty_list_quickly(
    demo: Path, backend: Backend, lsp: Starter, server_process: ServerProcess
) -> None:
    await backend.register(demo)
    session = await lsp("visual-studio-code", [demo], mode="server")
    await until(lambda: connected(session.client))
    await session.wait_in_play(demo)
    server_process.kill()
    started = time.monotonic()
    assert await symbols(session, "ruff") == []
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("profile", ["neovim@v0.11", RESOLVE])
async def test_an_active_plan_is_found_and_leads_to_its_first_change(
    demo: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    await backend.register(demo)
    fixed = (demo / "greetings.py").read_text().replace("{nmae}", "{name}")
    raw = await backend.facade.dispatch(
        "plan.create",
        {
            "resource": "demo",
            "title": "Fix the greeting typo",
            "files": [{"path": "greetings.py", "new_text": fixed}],
        },
    )
    plan = await settled(backend.facade, Plan.model_validate(raw).id)
    session = await lsp(profile, [demo])
    await session.wait_in_play(demo)
    (found,) = await symbols(session, "greettypo")
    assert found.name == "Fix the greeting typo" and found.kind == types.SymbolKind.Object
    assert found.container_name == f"demo · {plan.state}"
    if profile == RESOLVE:
        options = session.capabilities.workspace_symbol_provider
        assert isinstance(options, types.WorkspaceSymbolOptions) and options.resolve_provider
        assert isinstance(found, types.WorkspaceSymbol)
        assert isinstance(found.location, types.LocationUriOnly)
        found = await session.client.workspace_symbol_resolve_async(found)
    assert isinstance(found.location, types.Location)
    assert found.location.uri == uri(demo / "greetings.py")
    assert found.location.range.start.line == 4  # the line with the typo
    # Cancelled, it is no longer active: gone from the list.
    await backend.facade.dispatch("plan.cancel", {"plan_id": plan.id})
    await wait_for_symbols(session, "greettypo", 0)


async def wait_for_symbols(session: Session, query: str, count: int) -> None:
    deadline = time.monotonic() + 10
    while len(await symbols(session, query)) != count:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
