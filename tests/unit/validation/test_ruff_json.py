"""The ruff preset reads ruff's JSON: findings, rule names, and fixes with
ruff's own word on how safe each is (its SARIF leaves that out)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_backend.validation.config import parse_config
from acp_backend.validation.locations import FindingConverter, findings_of
from acp_backend.validation.parsers import parse_output
from acp_backend.validation.raw import applicability_from_word
from acp_client.models import FixApplicability

SOURCE = "import os\nname = 'é' + os.sep\n"


def record(root: Path, applicability: str | None) -> dict[str, object]:
    """One finding as ruff 0.17's ``--output-format json`` writes it."""
    fix = {
        "applicability": applicability,
        "edits": [
            {
                "content": "",
                "location": {"row": 1, "column": 1},
                "end_location": {"row": 2, "column": 1},
            }
        ],
        "message": "Remove unused import: `os`",
    }
    if applicability is None:
        del fix["applicability"]
    return {
        "cell": None,
        "code": "F401",
        "location": {"row": 1, "column": 8},
        "end_location": {"row": 1, "column": 10},
        "filename": str(root / "a.py"),
        "fix": fix,
        "message": "`os` imported but unused",
        "name": "unused-import",
        "noqa_row": 1,
        "severity": "error",
        "url": "https://docs.astral.sh/ruff/rules/unused-import",
    }


def read(root: Path, *records: dict[str, object]) -> list:
    (config,) = parse_config('[[validations]]\npreset = "ruff"\nmode = "required"\n')
    converter = FindingConverter(str(root))
    raws = parse_output(config, json.dumps(list(records)), "")
    return list(findings_of([converter.convert(raw) for raw in raws if converter.admits(raw)]))


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("safe", FixApplicability.SAFE),
        ("unsafe", FixApplicability.UNSAFE),
        ("display-only", FixApplicability.DISPLAY_ONLY),
        ("DisplayOnly", FixApplicability.DISPLAY_ONLY),
        (None, FixApplicability.SAFE),
    ],
)
def test_each_applicability_is_kept(tmp_path: Path, word: str | None, expected: object) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    (finding,) = read(tmp_path, record(tmp_path, word))
    assert finding.code == "F401" and finding.rule_description == "unused-import"
    assert finding.help_uri == "https://docs.astral.sh/ruff/rules/unused-import"
    location = finding.location
    assert (location.path, location.line, location.character, location.end_character) == (
        "a.py",
        0,
        7,
        9,
    )
    (fix,) = finding.fixes
    assert fix.applicability is expected and fix.description == "Remove unused import: `os`"
    (edit,) = fix.edits
    assert (edit.location.line, edit.location.character) == (0, 0)
    assert (edit.location.end_line, edit.location.end_character) == (1, 0)
    assert edit.new_text == ""


def test_a_word_it_does_not_know_is_unsafe_never_safe() -> None:
    assert applicability_from_word("maybe-later") is FixApplicability.UNSAFE


def test_a_finding_without_a_fix_has_none(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE)
    bare = {**record(tmp_path, "safe"), "fix": None, "code": None}
    (finding,) = read(tmp_path, bare)
    assert finding.fixes == () and finding.code is None
