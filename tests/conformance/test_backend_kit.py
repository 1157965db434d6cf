"""The backend suite run as a user runs it: against the reference backend in
process and served on 127.0.0.1, and against backends broken on purpose."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from kit_harness import PLUGIN, REPO, kit_env, run_kit

from tests.support.servers import ServerProcess, free_port

PLAN_CHECKS = {
    "plan_execute",
    "plan_preview",
    "plan_apply_wrong_hash",
    "plan_apply_after_file_moved",
    "plan_apply",
    "plan_cancel_applied",
}


def test_reference_backend_in_process_passes(tmp_path: Path) -> None:
    run = run_kit(tmp_path, "--acp-conformance=backend", "--acp", "local")
    assert run.status == 0, run.output[-3000:]
    outcomes = run.outcomes()
    assert run.failed() == set()
    assert outcomes["run_event_order"] == outcomes["resume_without_gap_or_duplicate"] == "pass"
    assert outcomes["rpc_needs_token"] == "skip"  # no HTTP in process
    # Plans: all checked where the backend serves them, all skipped where it does not.
    assert {outcomes[check] for check in PLAN_CHECKS} in ({"pass"}, {"skip"})
    assert "ACP conformance" in run.output and "backend suite against local" in run.output


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerProcess]:
    """``acp-backend serve`` on 127.0.0.1, keeping only 5 events so the
    trimmed-log reset can be checked."""
    monkeypatch.setenv("ACP_EVENT_RETENTION", "5")
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    server = ServerProcess(data_dir)
    server.start()
    yield server
    server.stop()


def test_served_reference_backend_passes(served: ServerProcess, tmp_path: Path) -> None:
    run = run_kit(
        tmp_path / "kit",
        "--acp-conformance=backend",
        "--acp",
        served.url + "/acp/v1",
        "--acp-token-file",
        str(served.token_file),
    )
    assert run.status == 0, run.output[-3000:]
    outcomes = run.outcomes()
    http_checks = {
        "rpc_needs_token",
        "rpc_refuses_wrong_token",
        "events_need_token",
        "health_is_open",
        "parse_error",
        "invalid_request",
        "sse_framing",
        "stream_reset_when_trimmed",
    }
    assert {n: outcomes[n] for n in http_checks if outcomes[n] != "pass"} == {}


@pytest.mark.parametrize(
    ("facade", "expected", "reason_of", "reason"),
    [
        (
            "wrong_error_code",
            {
                "not_found",
                "operation[resource.unregister]",
                "operation[validation.cancel]",
                "alias[_cleveragents/validation/cancel]",
            },
            "not_found",
            "error code -32603, expected -32001 (NOT_FOUND",
        ),
        (
            "event_gap",
            {"run_event_order", "resume_without_gap_or_duplicate", "stream_reset_when_trimmed"},
            "resume_without_gap_or_duplicate",
            "expected [",
        ),
        (
            "missing_field",
            {"operation[resource.list]", "alias[_cleveragents/registry/resources/list]"},
            "operation[resource.list]",
            "'created_at' is a required property",
        ),
    ],
)
def test_a_broken_backend_fails_with_reasons(
    tmp_path: Path, facade: str, expected: set[str], reason_of: str, reason: str
) -> None:
    run = run_kit(
        tmp_path,
        "--acp-conformance=backend",
        "--facade",
        f"tests.conformance.broken_backend:{facade}",
        timeout_s=5,  # a gap makes a wait run out: keep it short
    )
    assert run.status == 1
    # Exactly what the break explains (the plan checks' NOT_FOUND samples too, once served).
    assert {check for check in run.failed() if "plan" not in check} == expected, run.failed()
    assert reason in run.reason(reason_of), run.reason(reason_of)
    assert f"FAIL  {reason_of}" in run.output  # the printed table says it too


def test_a_broken_served_backend_fails_with_reasons(tmp_path: Path) -> None:
    port, token_file = free_port(), tmp_path / "token"
    (tmp_path / "data").mkdir()
    command = [sys.executable, "-m", "tests.conformance.broken_backend", "event_gap"]
    server = subprocess.Popen(
        [*command, str(tmp_path / "data"), str(port), str(token_file)], cwd=REPO
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            assert time.monotonic() < deadline, "the broken backend did not start"
            time.sleep(0.05)
        run = run_kit(
            tmp_path / "kit",
            "--acp-conformance=backend",
            "--acp",
            url + "/acp/v1",
            "--acp-token-file",
            str(token_file),
            timeout_s=5,  # the gap makes one wait run out: keep it short
        )
    finally:
        server.terminate()
        server.wait(5)
    assert run.status == 1
    assert {"run_event_order", "resume_without_gap_or_duplicate"} <= run.failed()
    assert run.outcomes()["rpc_needs_token"] == "pass"


def test_a_prepared_resource_is_used_as_it_is(tmp_path: Path) -> None:
    """``--acp-resource``: for backends where the kit cannot register a folder."""
    data_dir, scratch = tmp_path / "data", tmp_path / "prepared"
    data_dir.mkdir()
    env = kit_env()
    subprocess.run(
        [sys.executable, "-m", "acp_conformance.scratch", str(scratch)], env=env, check=True
    )
    backend = [sys.executable, "-m", "acp_backend.cli", "--data-dir", str(data_dir)]
    subprocess.run(
        [*backend, "resource", "add", str(scratch), "--name", "ready"], env=env, check=True
    )
    run = run_kit(
        tmp_path / "kit",
        "--acp-conformance=backend",
        "--acp-data-dir",
        str(data_dir),
        "--acp-resource",
        "ready",
    )
    assert run.status == 0, run.output[-3000:]
    assert run.outcomes()["pagination"] == "pass"
    listed = subprocess.run(
        [*backend, "resource", "list"], env=env, capture_output=True, text=True, check=True
    )
    assert "ready" in listed.stdout  # not the kit's to unregister


def test_the_example_workflow_uses_real_options(tmp_path: Path) -> None:
    workflow = (REPO / "examples" / "ci" / "acp-conformance.yml").read_text(encoding="utf-8")
    command = workflow.split("pytest --acp-conformance=backend", 1)[1].split("- name:", 1)[0]
    flags = set(re.findall(r"(--[a-z][a-z-]+)", command))
    assert {"--acp", "--acp-token-file", "--acp-conformance-report"} <= flags
    help_text = subprocess.run(
        [sys.executable, "-m", "pytest", *PLUGIN, "--help"],
        cwd=tmp_path,
        env=kit_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert {flag for flag in flags if flag not in help_text} == set()
