"""``kill -9`` in the middle of a multi-file apply: the next start settles it.

A real subprocess applies a three-file plan and freezes half-way (one file
staged, or one file already replaced); it is killed with SIGKILL; a new
backend on the same data dir must leave either every file old (rolled back,
the plan still appliable) or every file new (rolled forward, recorded applied).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acp_backend.facade import BackendFacade, create_facade
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
FREEZER = Path(__file__).with_name("plan_apply_freezer.py")
OLD = {f"f{i}.py": f"old = {i}\n" for i in range(3)}
NEW = {f"f{i}.py": f"new = {i}\n" for i in range(3)}


def contents(project: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(project.glob("*.py"))}


async def prepared(tmp_path: Path) -> tuple[Path, Path, str, str]:
    project, data_dir = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    for name, text in OLD.items():
        (project / name).write_text(text)
    facade = create_facade(data_dir)
    try:
        await facade.dispatch("resource.register", {"path": str(project), "name": "p"})
        files = [{"path": name, "new_text": text} for name, text in NEW.items()]
        plan = await facade.dispatch("plan.create", {"resource": "p", "title": "t", "files": files})
        preview = await facade.dispatch("plan.preview", {"plan_id": plan["id"]})
    finally:
        await facade.aclose()
    return project, data_dir, plan["id"], preview["plan_hash"]


def freeze_and_kill(data_dir: Path, plan_id: str, plan_hash: str, where: str) -> None:
    process = subprocess.Popen(
        (sys.executable, str(FREEZER), str(data_dir), plan_id, plan_hash, where),
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "FROZEN"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("where", ["staging", "renaming"])
async def test_a_killed_apply_is_settled_on_the_next_start(tmp_path: Path, where: str) -> None:
    project, data_dir, plan_id, plan_hash = await prepared(tmp_path)

    freeze_and_kill(data_dir, plan_id, plan_hash, where)
    if where == "renaming":  # the crash left a mix on disk
        assert contents(project) not in (OLD, NEW)

    facade = create_facade(data_dir)  # the next start
    try:
        # Settled as it opened, before any plan operation was called (ADR 0032).
        assert not list((data_dir / "plans" / "journal").glob("*.json"))
        plan = await facade.dispatch("plan.get", {"plan_id": plan_id})
        if where == "staging":  # before the commit: rolled back, and still appliable
            assert contents(project) == OLD and plan["state"] == "complete"
            await facade.dispatch("plan.apply", {"plan_id": plan_id, "expected_hash": plan_hash})
        else:  # after the commit: rolled forward, and announced
            assert plan["state"] == "applied"
            events = [e async for e in _events(facade)]
            assert "plan.applied" in events
        assert contents(project) == NEW
        assert not [p for p in project.iterdir() if p.name.endswith(".tmp")]
        assert not list((data_dir / "plans" / "journal").glob("*.json"))
    finally:
        await facade.aclose()


async def _events(facade: BackendFacade) -> AsyncIterator[str]:
    stream = facade.subscribe(0)
    last = facade.services.events.last_id()
    async for message in stream:
        yield message["method"]
        if message["params"]["event_id"] >= last:
            break
    await stream.aclose()


def kill_during_fix(project: Path, data_dir: Path) -> None:
    """``acp-backend plan propose`` of a slow fix, killed once its sandbox exists."""
    project.mkdir()
    slow = [sys.executable, "-c", "import time; time.sleep(15)"]  # outlives the kill: short
    (project / "acp.toml").write_text(
        '[[validations]]\nname = "slow"\nmode = "required"\n'
        f'command = {json.dumps(slow)}\nformat = "exit-code"\nfix = {json.dumps(slow)}\n'
    )
    backend = str(Path(sys.executable).parent / "acp-backend")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = (backend, "--data-dir", str(data_dir))
    subprocess.run((*args, "resource", "add", str(project)), env=env, check=True)
    process = subprocess.Popen((*args, "plan", "propose", "project", "slow"), env=env)
    try:
        sandboxes = data_dir / "sandboxes"
        wait_until(
            lambda: sandboxes.is_dir() and any(sandboxes.iterdir()), 30, "the fix never started"
        )
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)


def empty(folder: Path) -> bool:
    return not any(folder.iterdir())


async def test_a_plan_whose_backend_died_mid_fix_ends_errored(tmp_path: Path) -> None:
    """``kill -9`` of the process running a fix: the next start ends the plan
    errored and removes its sandbox (closed first, so nothing resolves into it)."""
    data_dir = tmp_path / "data"
    kill_during_fix(tmp_path / "project", data_dir)

    facade = create_facade(data_dir)  # the next start
    try:
        # Settled as it opened, before any plan operation was called (ADR 0032).
        [row] = facade.services.store.query("SELECT state FROM plans", ())
        assert row["state"] == "errored"
        [plan] = (await facade.dispatch("plan.list", {}))["plans"]
        assert plan["state"] == "errored" and "stopped" in plan["reason"]
        assert empty(data_dir / "sandboxes")
        resource = (await facade.dispatch("resource.list", {}))["resources"][0]
        assert resource["sandbox_roots"] == []
    finally:
        await facade.aclose()
