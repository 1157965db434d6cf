"""A tool that colours its output even when piped (issue 27, item 8): ruff's
concise output with ``FORCE_COLOR=1``, read by a ``pattern`` validation,
gives the same findings, in plain words, as without colour. The escape
sequences are removed from every tool's output before any parser reads it."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from acp_backend.validation.config import parse_config
from acp_backend.validation.runner import output_text, validator_environment
from acp_backend.validation.validator import RunTarget, run_validation
from acp_client.models import ValidationResult

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo"
PATTERN = r"^(?P<path>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<code>[A-Z]+\d+) (?P<message>.*)$"


def concise_ruff(colour: bool) -> str:
    command = ["ruff", "check", "--no-cache", "--output-format", "concise", "."]
    env = 'env = { FORCE_COLOR = "1" }\n' if colour else 'env = { NO_COLOR = "1" }\n'
    return (
        f'[[validations]]\nname = "ruff-concise"\nmode = "required"\n'
        f"command = {json.dumps(command)}\nformat = \"pattern\"\npattern = '{PATTERN}'\n"
        f'columns = "code-points"\n{env}'
    )


def run(root: Path, colour: bool) -> ValidationResult:
    (config,) = parse_config(concise_ruff(colour))
    return asyncio.run(run_validation(config, RunTarget("r", root, "run")))


def test_a_tool_that_colours_when_piped_reads_as_plain_text(tmp_path: Path) -> None:
    assert shutil.which("ruff", path=validator_environment()["PATH"]), "ruff: a test dependency"
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".*_cache", "__pycache__"))
    coloured, plain = run(root, colour=True), run(root, colour=False)
    assert plain.findings, plain.message
    assert coloured.findings == plain.findings
    assert coloured.message == plain.message
    for finding in coloured.findings:
        assert "\x1b" not in finding.message and "[0m" not in finding.message, finding
    codes = {(f.location.path, f.code) for f in coloured.findings if f.location}
    assert ("inventory.py", "F401") in codes and ("greetings.py", "F821") in codes


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"\x1b[1m\x1b[31mF401\x1b[0m unused", "F401 unused"),  # SGR colours
        (b"a\x1b[2K\x1b[1Gb\x1b[?25l", "ab"),  # erase, cursor, private modes
        (b"\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC hyperlink
        (b"\x1b]0;title\x07done", "done"),  # OSC title ended by BEL
        (b"keep [1m and \\x1b literal", "keep [1m and \\x1b literal"),  # no ESC: as is
        (b"bad \xff byte", "bad \ufffd byte"),
    ],
)
def test_escape_sequences_are_removed_and_nothing_else(raw: bytes, text: str) -> None:
    assert output_text(raw) == text
