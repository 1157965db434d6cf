"""``context.inspect`` in JavaScript and Bash through both transports (the
in-process facade and the real HTTP server on 127.0.0.1): a real validator
run's findings, the enclosing function, the snippets, a plan that changed the
line and then the commit that did, in a real git work tree."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from conftest import LiveServer

from acp_client.client import AcpClient
from acp_client.connect import connect
from acp_client.events import ValidationResultEvent
from acp_client.head_start import LOCAL
from acp_client.models import ContextInfo, FileEdit, Plan, PlanState
from tests.support.git import AUTHOR, committed

CART = """\
// Cart helpers.

/** Adds up the prices of the items. */
function total(items) {
  let sum = 0;
  for (const item of items) {
    sum += item.prise;
  }
  return sum;
}

const count = (items) => items.prise;
"""
DEPLOY = """\
#!/usr/bin/env bash
# Deploys the site.
set -eu

# Copies the build.
deploy() {
  rsync -a build/ "$1:/srv/site/"
}
"""
LINT = """\
echo 'cart.js:7:17: warning: Unknown property prise [no-prise]'
echo 'cart.js:12:32: warning: Unknown property prise [no-prise]'
echo 'deploy.sh:7:3: warning: rsync without --delete [no-delete]'
exit 1
"""
ACP_TOML = """\
[[validations]]
name = "mylint"
mode = "informational"
command = ["sh", "lint.sh"]
format = "pattern"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name, text in {
        "cart.js": CART,
        "deploy.sh": DEPLOY,
        "lint.sh": LINT,
        "acp.toml": ACP_TOML,
    }.items():
        (root / name).write_text(text)
    committed(root, "Add the cart and the deploy script")
    return root


@pytest.fixture(params=["local", "http+sse"])
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AcpClient]:
    server = LiveServer(tmp_path / "data").start() if request.param == "http+sse" else None
    if server is None:
        acp = await connect(LOCAL, data_dir=tmp_path / "data")
    else:
        acp = await connect(server.url, token=server.token)
    yield acp
    await acp.aclose()
    if server is not None:
        server.stop()


async def linted(client: AcpClient, project: Path) -> None:
    await client.resource_register(str(project), name="p")
    run = await client.validation_run("p")
    assert run.started_event_id is not None
    async for event in client.events(run.started_event_id - 1):
        if isinstance(event, ValidationResultEvent) and event.result.run_id == run.run_id:
            assert len(event.result.findings) == 3
            return
    raise AssertionError("the stream ended")


async def inspect(client: AcpClient, path: Path, line: int, text: str | None = None) -> ContextInfo:
    return await client.context_inspect(str(path), line, text=text)


async def test_a_javascript_function_its_snippets_and_its_commit(
    client: AcpClient, project: Path
) -> None:
    await linted(client, project)
    info = await inspect(client, project / "cart.js", 6)
    (here,) = info.findings
    assert (here.validation, here.finding.code) == ("mylint", "no-prise")
    assert info.entity is not None
    assert (info.entity.id, info.entity.signature, info.entity.doc) == (
        "js:function/cart.js#total",
        "function total(items)",
        "Adds up the prices of the items.",
    )
    assert (info.entity.language, info.entity.location.line) == ("javascript", 3)
    (others,) = info.items  # near its start: no first lines of ``total``
    assert others.title == "1 more no-prise finding in this file (mylint)"
    assert others.body == "12: const count = (items) => items.prise;"
    assert info.history is not None
    assert (info.history.subject, info.history.author) == (
        "Add the cart and the deploy script",
        AUTHOR,
    )
    arrow = await inspect(client, project / "cart.js", 11)
    assert arrow.entity is not None and arrow.entity.signature == "const count = (items) =>"


async def test_a_shell_line_a_plan_changed_then_the_commit_that_took_it(
    client: AcpClient, project: Path
) -> None:
    await linted(client, project)
    info = await inspect(client, project / "deploy.sh", 6)
    assert [h.finding.code for h in info.findings] == ["no-delete"]
    assert info.entity is not None
    assert (info.entity.id, info.entity.signature, info.entity.doc) == (
        "sh:function/deploy.sh#deploy",
        "deploy()",
        "Copies the build.",
    )
    fixed = DEPLOY.replace("rsync -a", "rsync -a --delete")
    plan = await client.plan_create(
        "p",
        title="Delete stale files",
        author="fixer",
        files=(FileEdit(path="deploy.sh", new_text=fixed),),
    )
    plan = await until_settled(client, plan.id)
    preview = await client.plan_preview(plan.id)
    await client.plan_apply(plan.id, preview.plan_hash)
    info = await inspect(client, project / "deploy.sh", 6)
    (changed,) = info.provenance
    assert changed.plan.title == "Delete stale files" and changed.applied_at is not None
    assert info.history is not None and info.history.commit is None  # on disk, not committed
    commit = committed(project, "Sync with --delete")
    info = await inspect(client, project / "deploy.sh", 6)
    assert [p.plan.title for p in info.provenance] == ["Delete stale files"]  # still first
    assert info.history is not None
    assert (info.history.commit, info.history.subject) == (commit, "Sync with --delete")
    # An unsaved edit of the line: not committed yet, and no longer the plan's.
    edited = fixed.replace("build/", "dist/")
    info = await inspect(client, project / "deploy.sh", 6, text=edited)
    assert info.provenance == () and info.history is not None and info.history.commit is None


async def until_settled(client: AcpClient, plan_id: str) -> Plan:
    async with asyncio.timeout(30):
        while True:
            plan = await client.plan_get(plan_id)
            if plan.state not in (PlanState.QUEUED, PlanState.PROCESSING):
                return plan
            await asyncio.sleep(0.05)
