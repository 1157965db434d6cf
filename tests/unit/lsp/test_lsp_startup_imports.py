"""What each entry point loads (ADR 0015, 0016): ``acp-lsp --help`` parses its
arguments before anything heavy is imported, ``acp-lsp check`` runs a whole
check without loading an LSP framework, and the language server answers
``initialize`` before it loads its features and the ACP client.

Each case runs in a fresh interpreter and lists the modules it loaded, so an
eager import anywhere on the path fails here, not in a stopwatch.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_client.threads import SWITCH_INTERVAL
from tests.unit.lsp.lsp_factories import todo_project

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import contextlib, io, json, sys
from lsp_server.__main__ import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def probed(probe: str, *argv: str) -> dict[str, Any]:
    """What ``probe`` printed last, as JSON, run in a fresh interpreter with ``argv``."""
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    answer: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return answer


def run(*argv: str) -> tuple[object, set[str]]:
    """The exit code, and the packages and modules loaded (``a`` and ``a.b``)."""
    answer = probed(PROBE, *argv)
    modules: list[str] = answer["modules"]
    return answer["code"], {*modules, *(module.split(".")[0] for module in modules)}


def test_help_and_version_load_neither_the_server_nor_the_client() -> None:
    """Nor asyncio (~50 ms here): the backend connection's module waits until
    the arguments are parsed (issue 25, item 2)."""
    for argv in (["--help"], ["--version"], ["--tcp", "nonsense"], ["check", "--help"]):
        code, modules = run(*argv)
        assert code in (0, 2)
        heavy = {"pygls", "lsprotocol", "cattrs", "pydantic", "httpx", "asyncio", "ssl"}
        assert not modules & heavy, (argv, modules & heavy)


def test_check_runs_a_whole_check_without_an_lsp_framework(tmp_path: Path) -> None:
    """Nor, with no server serving the data dir, an HTTP client or a web
    server (issue 25: httpx alone, with the rich and click it imports, was
    ~90 ms of a short check)."""
    project = todo_project(tmp_path / "project")
    data = str(tmp_path / "data")
    unused = {"pygls", "lsprotocol", "cattrs", "httpx", "httpx_sse", "starlette", "uvicorn"}
    for argv in (["--register"], ["--no-run"]):
        code, modules = run("check", "--data-dir", data, *argv, str(project))
        assert code == 0
        assert "acp_backend" in modules  # the check really happened, in this process
        assert not modules & unused, (argv, modules & unused)


def test_reading_stored_results_loads_no_validator_plan_or_inspection_code(
    tmp_path: Path,
) -> None:
    """The backend loads each operation's handler on its first call (ADR
    0032): ``check --no-run`` runs nothing, so the code that runs validators,
    moves plans and inspects code stays out (~40 ms of its ~250). A check
    that runs loads the validators' code, and so does a start with plans to
    settle. Nor does it diff text, or read the installed package's metadata
    for its version (``acp_client.version``)."""
    project = todo_project(tmp_path / "project")
    data = str(tmp_path / "data")
    running = {"acp_backend.validation.runs", "acp_backend.validation.config"}
    unused = {
        *running,
        "acp_backend.plans.lifecycle",
        "acp_backend.plans.applying",
        "acp_backend.inspect.service",
        "acp_backend.plans.text",
        "email.parser",
    }
    code, modules = run("check", "--data-dir", data, "--register", str(project))
    assert code == 0 and running <= modules
    code, modules = run("check", "--data-dir", data, "--no-run", str(project))
    assert code == 0 and "acp_backend.validation.results" in modules
    assert not modules & unused, modules & unused


# ``acp-lsp check --no-run``, counting the collector's passes made while the
# check was still loading (its module not yet complete).
LOADING_GC_PROBE = """
import contextlib, gc, io, json, sys
during = []
def count(phase, info):
    check = sys.modules.get("lsp_server.cli_check")
    if phase == "start" and "pydantic" in sys.modules and not hasattr(check, "main"):
        during.append(info["generation"])
gc.callbacks.append(count)
from lsp_server.__main__ import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "during": during}))
"""


def test_a_check_loads_without_the_collector_walking_what_it_loads(tmp_path: Path) -> None:
    """The contract's models and the backend's code live as long as the
    check: collecting while they load walked them ~80 times (~10 ms of a
    ``--no-run`` check); the server's start-up already skipped that."""
    project = todo_project(tmp_path / "project")
    data = str(tmp_path / "data")
    assert run("check", "--data-dir", data, "--register", str(project))[0] == 0
    answer = probed(LOADING_GC_PROBE, "check", "--data-dir", data, "--no-run", str(project))
    assert answer["code"] == 0
    assert answer["during"] == []


# ``acp-lsp check`` with each start of the parse server recorded (which
# entry point, and how many threads the process ran then), and at its end
# the command line of each process it started that is still running.
HEAD_START_PROBE = """
import contextlib, io, json, os, sys, threading
from pathlib import Path
from acp_backend.validation import fork_server
calls = []
def recorded(name, start):
    def call():
        calls.append([name, threading.active_count()])
        start()
    return call
fork_server.fork_here = recorded("fork_here", fork_server.fork_here)
fork_server.warm_up = recorded("warm_up", fork_server.warm_up)
from lsp_server.__main__ import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
children = []
for stat in Path("/proc").glob("[0-9]*/stat"):
    with contextlib.suppress(OSError):
        if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
            children.append((stat.parent / "cmdline").read_bytes().decode().split("\\0"))
print(json.dumps({"code": code, "calls": calls, "children": children, "own": sys.orig_argv}))
"""


def head_starts(*argv: str) -> dict[str, Any]:
    return probed(HEAD_START_PROBE, *argv)


def parse_servers(answer: dict[str, Any]) -> list[str]:
    """The probed check's parse servers still running: forked from it, or
    started as an interpreter of their own (its other children, such as the
    runner's process-group watcher, are neither)."""
    own = [part for part in answer["own"] if part]
    kinds = []
    for child in answer["children"]:
        command = [part for part in child if part]
        if command == own:
            kinds.append("forked")
        elif any("serve()" in part for part in command):
            kinds.append("interpreter")
    return kinds


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_local_check_forks_its_parse_server_before_it_connects(tmp_path: Path) -> None:
    """Forked from the check once the parsers are loaded (ADR 0038): no
    interpreter of its own to start and load them again, on the same cores
    as the check's own loading and its tools."""
    project = todo_project(tmp_path / "project")
    data = tmp_path / "data"
    answer = head_starts("check", "--data-dir", str(data), "--register", str(project))
    assert answer["code"] == 0
    assert answer["calls"][0] == ["fork_here", 1]  # while the check ran no other thread
    assert {name for name, _ in answer["calls"][1:]} <= {"warm_up"}  # the backend's own
    # One parse server, a fork of this very process (a fresh interpreter's
    # command line would be ``-c ... serve()``), and it is the one used.
    assert parse_servers(answer) == ["forked"]
    # Nothing to parse, or maybe not this process's backend: no head start.
    answer = head_starts("check", "--data-dir", str(data), "--no-run", str(project))
    assert (answer["code"], answer["calls"], answer["children"]) == (0, [], [])
    (data / "backend.json").write_text("{}", encoding="utf-8")  # a server may serve it
    answer = head_starts("check", "--data-dir", str(data), str(project))
    assert answer["code"] == 0
    assert ["fork_here", 1] not in answer["calls"]  # the backend's own, once it is clear
    assert parse_servers(answer) == ["interpreter"]
    answer = head_starts("check", "--acp", "http://127.0.0.1:9", str(project))
    assert (answer["code"], answer["calls"]) == (2, [])


# What the initialize answer must not wait for (ADR 0016): the features and
# the ACP client under them load in the background after it.
LOADED_AFTER_INITIALIZE = {
    "pydantic",
    "sqlite3",
    "acp_backend",
    "acp_client.client",
    "acp_client.models",
    "acp_client.events",
    "acp_client.connect",
    "lsp_server.settings",
    "lsp_server.features.loaded",
    "lsp_server.features.diagnostics",
}

# The server as ``acp-lsp`` runs it, its stdout writer wrapped: before each
# message goes out, the modules loaded at that moment (``sys.modules`` sees
# every import, however it was made) and the collector's state are appended
# to a file, one JSON object a line.
SERVE = """
import gc, json, sys
from lsp_server import stdio
from lsp_server.__main__ import main

def recording(write):
    def recorded(self, data):
        state = {
            "modules": sorted(sys.modules.copy()),
            "gc": gc.isenabled(),
            "frozen": gc.get_freeze_count(),
            "switch": sys.getswitchinterval(),
        }
        with open(sys.argv[1], "a") as log:
            log.write(json.dumps(state) + "\\n")
        return write(self, data)
    return recorded

stdio.PipeStdout.write = recording(stdio.PipeStdout.write)
sys.exit(main(sys.argv[2:]))
"""


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def receive(stdout: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while line := (await stdout.readline()).strip():
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(await stdout.readexactly(length))
    return message


def state_at_each_write(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_initialize_is_answered_before_the_client_and_the_features_load(
    tmp_path: Path,
) -> None:
    writes = tmp_path / "modules.jsonl"
    server = await asyncio.create_subprocess_exec(
        *(sys.executable, "-c", SERVE, str(writes), "--data-dir", str(tmp_path / "data")),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        params = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
        server.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        )
        async with asyncio.timeout(30):
            reply = await receive(server.stdout)
            server.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            while "ACP backend connected" not in str(await receive(server.stdout)):
                pass
    finally:
        server.kill()
        await server.wait()
    at_answer, *later = state_at_each_write(writes)
    assert reply["id"] == 1 and "capabilities" in reply["result"]
    loaded = set(at_answer["modules"])
    assert {"pygls.lsp.server", "lsprotocol.types", "lsp_server.handlers"} <= loaded
    assert loaded & LOADED_AFTER_INITIALIZE == set()
    assert set(later[-1]["modules"]) >= LOADED_AFTER_INITIALIZE  # loaded, unasked
    assert "httpx" not in later[-1]["modules"]  # local mode, no server: no HTTP client
    # The collector, paused while the LSP types loaded, is back on, and what
    # start-up built is kept out of its passes.
    assert at_answer["gc"] and at_answer["frozen"] > 10_000
    # Threads hand the GIL over quickly (acp_client.threads): a parse in a
    # worker thread is not held back by the event loop's own work.
    assert at_answer["switch"] == pytest.approx(SWITCH_INTERVAL)
