"""A result the store cannot take is never lost in silence.

Through the real command line (``acp-backend validation run --wait``, an
in-process backend on a temporary data dir): a SARIF message with a lone
surrogate (which SQLite's UTF-8 cannot hold), and a full disk (the file
size limit, ``RLIMIT_FSIZE``, which makes every write past it fail as a full
disk does). Either way the run must end with the validation's result
reported, not dropped, and the exit status must say a required validation
failed.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON = sys.executable
CLI = (PYTHON, "-m", "acp_backend.cli")

# SARIF text with a lone surrogate escape: valid JSON, not encodable as UTF-8.
SURROGATE_SARIF = """\
import json
print(json.dumps({"version": "2.1.0", "runs": [{"results": [{
    "ruleId": "X1", "level": "error", "message": {"text": "bad \\\\ud800 text"},
    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "app.py"},
                   "region": {"startLine": 1}}}]}]}]}).replace("\\\\\\\\ud800", "\\\\ud800"))
"""

# Many findings: a result far larger than what the disk has left.
MANY_FINDINGS = "for i in range(4000): print(f'app.py:1:1: finding number {i} ' + 'x' * 60)"


def backend(
    data_dir: Path, *args: str, fsize: int | None = None
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(
        [*CLI, "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit,
        check=False,
    )


def project(tmp_path: Path, script: str, fmt: str) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n", encoding="utf-8")
    (root / "check.py").write_text(script, encoding="utf-8")
    (root / "acp.toml").write_text(
        '[[validations]]\nname = "lint"\nmode = "required"\n'
        f'format = "{fmt}"\ncommand = [{PYTHON!r}, "check.py"]\n',
        encoding="utf-8",
    )
    return root


def run_json(data_dir: Path, fsize: int | None = None) -> tuple[int, dict[str, object]]:
    done = backend(data_dir, "validation", "run", "proj", "--wait", "--json", fsize=fsize)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_lone_surrogate_in_sarif_is_reported_not_dropped(tmp_path: Path) -> None:
    root = project(tmp_path, SURROGATE_SARIF, "sarif")
    data = tmp_path / "data"
    assert backend(data, "resource", "add", str(root)).returncode == 0
    status, report = run_json(data)
    (result,) = report["results"]  # type: ignore[misc]
    assert report["summary"]["required_failed"] == 1  # type: ignore[index]
    assert status == 1
    if result["outcome"] == "unrecorded":  # else the parser cleaned the text up: fine too
        assert "could not be stored" in result["message"]
    stored = backend(data, "results", "proj", "--json")
    assert [r["id"] for r in json.loads(stored.stdout)["results"]] == [result["id"]]


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="no file size limit here")
def test_a_full_disk_makes_an_error_result_and_a_failing_exit(tmp_path: Path) -> None:
    root = project(tmp_path, MANY_FINDINGS, "pattern")
    data = tmp_path / "data"
    assert backend(data, "resource", "add", str(root)).returncode == 0
    biggest = max(path.stat().st_size for path in data.iterdir() if path.is_file())
    status, report = run_json(data, fsize=biggest + 64 * 1024)
    assert report["summary"]["required_failed"] == 1  # type: ignore[index]
    assert status == 1
    (result,) = report["results"]  # type: ignore[misc]
    assert result["outcome"] == "unrecorded"
    assert "could not be stored" in result["message"]
    assert os.path.getsize(data / "acp.sqlite3") <= biggest + 64 * 1024
