"""The done-when of validations, on the committed examples/demo: a real
``acp-backend serve``, the CLI run against it, an SSE subscriber watching.

``acp-backend validation run demo --wait --json`` must report ruff's findings
at the lines and columns ruff itself prints (converted to the contract's
0-based code points) and the TODO finder's findings; the SSE stream must show
``validation.started``, each ``validation.result``, then ``validation.completed``.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

from acp_client.discovery import BackendInfo, read_backend_file
from tests.support.waiting import until

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo"
BIN = Path(sys.executable).parent
ACP_BACKEND = str(BIN / "acp-backend")
WAIT = 60.0
# What ruff and the finder print: path:line:column: CODE message (1-based).
PRINTED = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<column>\d+):? (?P<code>[A-Z0-9]+):? ")


def printed_findings(*command: str) -> set[tuple[str, int, int, str]]:
    """A tool's own report, as (path, 0-based line, 0-based column, code)."""
    output = subprocess.run(
        command, cwd=DEMO, capture_output=True, text=True, timeout=WAIT, check=False
    ).stdout
    found = set()
    for line in output.splitlines():
        match = PRINTED.match(line)
        if match:
            found.add(
                (match["path"], int(match["line"]) - 1, int(match["column"]) - 1, match["code"])
            )
    assert found, output
    return found


def reported(result: dict[str, Any]) -> set[tuple[str, int, int, str]]:
    return {
        (f["location"]["path"], f["location"]["line"], f["location"]["character"], f["code"])
        for f in result["findings"]
    }


@pytest.fixture
def server(tmp_path: Path) -> Iterator[BackendInfo]:
    data_dir = tmp_path / "data"
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [ACP_BACKEND, "--data-dir", str(data_dir), "serve", "--port", "0"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + WAIT
        while (info := read_backend_file(data_dir)) is None:
            alive = process.poll() is None and time.monotonic() < deadline
            assert alive, (tmp_path / "serve.log").read_text()
            time.sleep(0.05)
        yield info
    finally:
        process.terminate()
        process.wait(WAIT)
        log.close()


class SseSubscriber:
    """Reads the server's event stream from its start, as any client would."""

    def __init__(self, info: BackendInfo) -> None:
        self.info = info
        self.events: list[tuple[int, dict[str, Any]]] = []
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        headers = {"Authorization": f"Bearer {self.info.token}", "Last-Event-ID": "0"}
        async with (
            httpx.AsyncClient(base_url=self.info.url, timeout=WAIT) as http,
            aconnect_sse(http, "GET", "/acp/v1/events", headers=headers) as source,
        ):
            async for sse in source.aiter_sse():
                if sse.data:
                    self.events.append((int(sse.id), json.loads(sse.data)))

    def of_run(self, run_id: str) -> list[dict[str, Any]]:
        return [
            message
            for _, message in self.events
            if message["params"].get("run_id", message["params"].get("result", {}).get("run_id"))
            == run_id
        ]

    async def aclose(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


@pytest.fixture
async def subscriber(server: BackendInfo) -> AsyncIterator[SseSubscriber]:
    watching = SseSubscriber(server)
    yield watching
    await watching.aclose()


async def cli(data_dir: Path, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        ACP_BACKEND,
        "--data-dir",
        str(data_dir),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


async def test_demo_run_reports_what_the_tools_print_and_streams_its_events(
    server: BackendInfo, subscriber: SseSubscriber
) -> None:
    data_dir = Path(server.data_dir)
    status, _, stderr = await cli(data_dir, "resource", "add", str(DEMO), "--name", "demo")
    assert status == 0, stderr
    status, stdout, stderr = await cli(data_dir, "validation", "run", "demo", "--wait", "--json")
    assert status == 1, stderr  # ruff is required and the demo has lint problems
    output = json.loads(stdout)
    results = {result["validation"]: result for result in output["results"]}
    assert set(results) == {"ruff", "todos"}

    ruff = results["ruff"]
    assert (ruff["mode"], ruff["passed"], ruff["outcome"]) == ("required", False, "completed")
    ruff_printed = printed_findings(
        str(BIN / "ruff"), "check", "--no-cache", "--output-format", "concise", "."
    )
    assert reported(ruff) == ruff_printed
    # One of them sits after an emoji and CJK text on its line.
    assert ("greetings.py", 4, 49, "F821") in ruff_printed

    todos = results["todos"]
    assert (todos["mode"], todos["passed"]) == ("informational", False)
    assert reported(todos) == printed_findings(sys.executable, "tools/find_todos.py")

    assert output["summary"] == {
        "required_passed": 0,
        "required_failed": 1,
        "informational_passed": 0,
        "informational_failed": 1,
        "cancelled": 0,
    }

    run_id = output["run"]["run_id"]
    await until(lambda: len(subscriber.of_run(run_id)) == 4, WAIT)
    seen = subscriber.of_run(run_id)
    assert [message["method"] for message in seen] == [
        "validation.started",
        "validation.result",
        "validation.result",
        "validation.completed",
    ]
    assert {message["params"]["result"]["id"] for message in seen[1:3]} == {
        ruff["id"],
        todos["id"],
    }
    ids = [event_id for event_id, message in subscriber.events if message in seen]
    assert ids == sorted(ids)


async def test_list_and_results_in_process_read_for_humans(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    assert (await cli(data_dir, "resource", "add", str(DEMO)))[0] == 0
    status, listing, _ = await cli(data_dir, "validation", "list", "demo")
    assert status == 0
    # ruff is declared by its preset: its applies_to, mode required.
    applies_to = r"\*\.py \*\.pyi pyproject\.toml ruff\.toml \.ruff\.toml"
    assert re.search(rf"^ruff +required +{applies_to} +Lint with ruff", listing, re.M)
    assert re.search(r"^todos +informational +\*\.py +TODO and FIXME", listing, re.M)
    # No backend is serving this data dir: the run lives in the command, which waits for it.
    status, run, _ = await cli(data_dir, "validation", "run", "demo", "--only", "todos")
    assert status == 0  # no --wait: the verdict does not set the exit status
    assert "todos (informational): failed: 2 findings" in run
    status, results, _ = await cli(data_dir, "results", "demo")
    assert status == 0
    assert "  greetings.py:9:23: TODO pick the farewell from the user's locale" in results
    status, as_json, _ = await cli(data_dir, "results", "demo", "--json")
    (todos,) = json.loads(as_json)["results"]
    assert todos["findings"][0]["location"]["character"] == 22
