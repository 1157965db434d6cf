"""The editor's "Fix all" keeps ruff's word on what is safe (issue 27, item 10).

A real file of a real code base (httpx's ``_content.py``, installed beside
acp-lsp), a broad ruff rule set, the ruff preset, the real server: "Fix
all" is chosen, the buffer saved, and again while it is offered, as a user
would until nothing is left to fix. The buffer ends exactly as ``ruff check
--fix`` leaves the file, and with ``unsafeFixes`` as ``--unsafe-fixes``
does; the two differ for this file.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from lsp_server.commands import FIX_ALL_KIND
from tests.e2e.editing import Buffers
from tests.e2e.test_e2e_code_actions import actions_at, choose
from tests.support.lsp_harness import WAIT, Backend, Session, Starter

RUFF = str(Path(sys.executable).parent / "ruff")
FILE = "_content.py"
RUFF_TOML = '[lint]\nselect = ["F", "UP", "SIM", "C4", "I", "RET"]\n'
ACP_TOML = '[[validations]]\npreset = "ruff"\nmode = "required"\n'
PASSES = 10


def project(root: Path) -> Path:
    root.mkdir(parents=True)
    shutil.copy(Path(httpx.__file__).parent / FILE, root / FILE)
    (root / "ruff.toml").write_text(f'target-version = "py311"\n{RUFF_TOML}')
    (root / "acp.toml").write_text(ACP_TOML)
    return root


def fixed_by_ruff(root: Path, *unsafe: str) -> str:
    subprocess.run(
        [RUFF, "check", "--fix", *unsafe, FILE], cwd=root, capture_output=True, check=False
    )
    return (root / FILE).read_text(encoding="utf-8")


async def latest_ruff_result(backend: Backend, resource_id: str) -> str | None:
    listed: Any = await backend.facade.dispatch(
        "validation.list_results", {"resource": resource_id}
    )
    return next((r["id"] for r in listed["results"] if r["validation"] == "ruff"), None)


async def shown_from(session: Session, path: Path, result_id: str, *, first: bool) -> None:
    """Until the diagnostics shown on ``path`` are those of ``result_id``
    (the first result has some; a later one may have fixed them all)."""
    deadline = time.monotonic() + WAIT
    while True:
        shown = await session.diagnostics(path)
        ours = all((d.data or {}).get("result_id") == result_id for d in shown)
        if ours and (shown or not first):
            return
        assert time.monotonic() < deadline, "the new run's findings were never shown"
        await asyncio.sleep(0.05)


async def saved_and_checked(
    buffers: Buffers, backend: Backend, resource_id: str, path: Path, before: str | None
) -> str:
    """Save, wait for ruff's new result, and for the editor to show it."""
    buffers.save(path)
    deadline = time.monotonic() + WAIT
    while (latest := await latest_ruff_result(backend, resource_id)) in (None, before):
        assert time.monotonic() < deadline, "saving did not run ruff"
        await asyncio.sleep(0.05)
    await shown_from(buffers.session, path, latest, first=before is None)
    return latest


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe-opted-in"])
async def test_fix_all_until_nothing_is_left_is_ruffs_own_fix(
    tmp_path: Path, backend: Backend, lsp: Starter, unsafe: bool
) -> None:
    root = project(tmp_path / "app")
    resource = await backend.register(root)
    options = {"acp": {"unsafeFixes": unsafe}}
    session = await lsp("visual-studio-code", [root], options=options)
    buffers = Buffers(session)
    path = root / FILE
    buffers.open(path)
    await session.wait_in_play(root)
    latest = await saved_and_checked(buffers, backend, resource.id, path, None)
    for _ in range(PASSES):
        offered = await actions_at(session, path, 0, 0, [FIX_ALL_KIND])
        if not offered:
            break
        await choose(buffers, offered[0])
        latest = await saved_and_checked(buffers, backend, resource.id, path, latest)
    else:
        pytest.fail(f"Fix all was still offered after {PASSES} passes")

    flag = ("--unsafe-fixes",) if unsafe else ()
    expected = fixed_by_ruff(project(tmp_path / "by-ruff"), *flag)
    assert buffers.text(path) == expected
    other = fixed_by_ruff(
        project(tmp_path / "by-ruff-other"), *(() if unsafe else ("--unsafe-fixes",))
    )
    assert other != expected  # the file is one where ruff's word matters
