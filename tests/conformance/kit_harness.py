"""Runs the conformance kit the way a user does: ``pytest --acp-conformance=...``
in a subprocess, and reads back the JSON report it writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# The entry point's name is its module's, so this loads it once, installed or not.
PLUGIN = ("-p", "acp_conformance.plugin")
SERVER = f"{sys.executable} -m lsp_server --acp {{acp}} --data-dir {{data_dir}}"


def kit_env() -> dict[str, str]:
    """This checkout first on the path, installed or not."""
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


@dataclass
class KitRun:
    status: int
    output: str
    report: dict[str, Any]

    def outcomes(self) -> dict[str, str]:
        return {c["check"]: c["outcome"] for c in self.report["checks"]}

    def reason(self, check: str) -> str:
        return next(c["reason"] for c in self.report["checks"] if c["check"] == check)

    def failed(self) -> set[str]:
        return {name for name, outcome in self.outcomes().items() if outcome == "fail"}


def run_kit(workdir: Path, *args: str, timeout_s: float = 20) -> KitRun:
    """``pytest --acp-conformance ...`` in ``workdir`` (a directory of its own, so
    none of this project's tests or settings are picked up); ``timeout_s`` is
    how long the kit waits for an event or a diagnostic."""
    workdir.mkdir(parents=True, exist_ok=True)
    report = workdir / "report"
    command = [
        sys.executable,
        "-m",
        "pytest",
        *PLUGIN,
        "-p",
        "no:cacheprovider",
        "--acp-conformance-report",
        str(report),
        "--acp-conformance-timeout",
        str(timeout_s),
        *args,
    ]
    done = subprocess.run(
        command,
        cwd=workdir,
        env=kit_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    output = done.stdout + done.stderr
    assert (workdir / "report.json").is_file(), f"no report written:\n{output[-3000:]}"
    # No ini here: the kit keeps pytest-asyncio's loop-scope advice to itself.
    assert "PytestDeprecationWarning" not in output, output[-3000:]
    data = json.loads((workdir / "report.json").read_text(encoding="utf-8"))
    assert (workdir / "report.md").is_file()
    return KitRun(done.returncode, output, data)
