"""A broken ``acp.toml`` shows as an Error on its offending line, for push
and pull clients; saving the fix clears it, whatever ``runOn`` is; the
declarations in force before the break still run."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from lsprotocol.types import DiagnosticSeverity as Sev

from tests.support.lsp_harness import PULL, Backend, Starter, connected, project
from tests.support.waiting import until

FAILING = "print('2 tests failed'); raise SystemExit(1)"
VALID = "\n".join(
    [
        "[[validations]]",
        'name = "tests"',
        'mode = "required"',
        f"command = [{sys.executable!r}, '-c', {FAILING!r}]",
        "",
    ]
)
BROKEN = VALID + '[[validations]]\nname = "lint"\nmode = 3\n'
BROKEN_LINE = 6  # 0-based: `mode = 3`
COMPLAINT = "acp.toml:7: validations[2].mode: Input should be 'required' or 'informational'"


def config_errors(shown: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in shown if d.source == "acp.toml"]


@pytest.mark.parametrize(
    ("profile", "mode"), [("visual-studio-code", "local"), (PULL, "local"), (PULL, "server")]
)
async def test_a_broken_acp_toml_shows_on_its_line_at_startup(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root = project(tmp_path / "app", {"acp.toml": BROKEN})
    await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    (shown,) = await session.wait_diagnostics(root / "acp.toml", lambda d: len(d) == 1)
    assert (shown.source, shown.severity) == ("acp.toml", Sev.Error)
    assert shown.range.start == types.Position(BROKEN_LINE, 0)
    assert shown.message.endswith(COMPLAINT)


@pytest.mark.parametrize("profile", ["neovim@v0.11", PULL])
async def test_saving_the_fix_clears_it_and_breaking_it_again_shows_it(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    root = project(tmp_path / "app", {"acp.toml": BROKEN})
    await backend.register(root)
    session = await lsp(profile, [root], options={"runOn": "manual"})
    toml = root / "acp.toml"
    await session.wait_diagnostics(toml, lambda d: len(config_errors(d)) == 1)
    session.open(toml, language="toml")
    session.save(toml, VALID, 2)
    await session.wait_diagnostics(toml, lambda d: d == [])
    session.save(toml, BROKEN.replace("mode = 3", "mode = 4"), 3)
    (shown,) = await session.wait_diagnostics(toml, lambda d: len(d) == 1)
    assert shown.source == "acp.toml" and shown.range.start.line == BROKEN_LINE
    assert shown.message.endswith(COMPLAINT)


async def test_the_declarations_before_the_break_still_run(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {"acp.toml": VALID})
    await backend.register(root)
    session = await lsp("visual-studio-code", [root])  # runOn: save
    await until(lambda: connected(session.client))
    # Its backend has read the valid file once the session lists its validation
    # (under load the listing can come after the save below otherwise).
    query = types.WorkspaceSymbolParams(query="tests")
    deadline = asyncio.get_running_loop().time() + 10
    while not await session.client.workspace_symbol_async(query):
        assert asyncio.get_running_loop().time() < deadline, "the validation was never listed"
        await asyncio.sleep(0.05)
    toml = root / "acp.toml"
    session.open(toml, language="toml")
    session.save(toml, BROKEN, 2)
    shown = await session.wait_diagnostics(toml, lambda d: len(d) == 2)
    by_source = {d.source: d for d in shown}
    assert by_source["acp.toml"].range.start.line == BROKEN_LINE
    tests = by_source["tests"]  # the run the save started, of the last valid declarations
    assert tests.severity == Sev.Error and "2 tests failed" in tests.message
