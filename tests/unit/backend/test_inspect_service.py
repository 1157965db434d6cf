"""``context.inspect`` through the facade, on a real store and real files."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acp_backend.facade import BackendFacade
from acp_backend.ids import new_ulid
from acp_client.errors import InvalidParams, NotFound, OutsideRoot
from acp_client.models import (
    ContextInfo,
    Finding,
    Location,
    ValidationMode,
    ValidationResult,
)

APP = '''\
import os


def greet(name: str) -> str:
    """Say hello."""
    return f"hi {nmae}"
'''

DECLARATIONS = """\
[[validations]]
name = "lint"
mode = "required"
description = "Lint the code"
command = ["true"]
fix = ["true"]
"""


@pytest.fixture
async def project(facade: BackendFacade, workspace: Path) -> Path:
    (workspace / "acp.toml").write_text(DECLARATIONS)
    (workspace / "src" / "app.py").write_text(APP)
    await facade.dispatch("resource.register", {"path": str(workspace), "name": "proj"})
    return workspace


async def inspect(facade: BackendFacade, **params: Any) -> ContextInfo:
    return ContextInfo.model_validate(await facade.dispatch("context.inspect", params))


def store_result(
    facade: BackendFacade, root: Path, findings: Sequence[Finding], **more: Any
) -> ValidationResult:
    (resource,) = facade.services.registry.resources()
    now = datetime.now(UTC)
    digest = hashlib.sha256((root / "src" / "app.py").read_bytes()).hexdigest()
    result = ValidationResult(
        id=new_ulid(),
        validation="lint",
        mode=ValidationMode.REQUIRED,
        passed=False,
        resource_id=resource.id,
        run_id=new_ulid(),
        started_at=now,
        finished_at=now,
        findings=tuple(findings),
        file_hashes={"src/app.py": digest},
        **more,
    )
    facade.services.store.insert_result(result)
    return result


NMAE = Finding(
    location=Location(path="src/app.py", line=5, character=18, end_line=5, end_character=22),
    message="Undefined name `nmae`",
    code="F821",
    rule_description="undefined-name",
    help_uri="https://docs.astral.sh/ruff/rules/undefined-name",
)


async def test_a_finding_and_its_enclosing_function(facade: BackendFacade, project: Path) -> None:
    stored = store_result(facade, project, [NMAE])
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=5, character=19)
    assert info.path == "src/app.py" and (info.line, info.character) == (5, 19)
    (here,) = info.findings
    assert here.finding == NMAE
    assert (here.validation, here.mode, here.description) == (
        "lint",
        ValidationMode.REQUIRED,
        "Lint the code",
    )
    assert here.run_id == stored.run_id and here.found_at == stored.finished_at
    assert here.fix_available and not here.stale
    assert info.entity is not None
    assert info.entity.id == "py:function/app.greet"
    assert info.entity.signature == "def greet(name: str) -> str"
    assert info.entity.doc == "Say hello."
    assert info.notes == ()


async def test_module_names_follow_packages(facade: BackendFacade, project: Path) -> None:
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=4)
    assert info.entity is not None and info.entity.id == "py:function/app.greet"
    (project / "src" / "__init__.py").write_text("")
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=4)
    assert info.entity is not None and info.entity.id == "py:function/src.app.greet"


async def test_a_plain_line_says_nothing(facade: BackendFacade, project: Path) -> None:
    store_result(facade, project, [NMAE])
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=0, character=3)
    assert (info.findings, info.entity, info.items, info.notes) == ((), None, (), ())
    # On the finding's line but off its range; and the whole line.
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=5, character=4)
    assert info.findings == () and info.entity is not None
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=5)
    assert [here.finding for here in info.findings] == [NMAE] and info.character is None


async def test_an_edited_file_makes_the_finding_stale(facade: BackendFacade, project: Path) -> None:
    store_result(facade, project, [NMAE])
    (project / "src" / "app.py").write_text(APP + "\n# edited\n")
    (here,) = (
        await inspect(facade, path=str(project / "src" / "app.py"), line=5, character=19)
    ).findings
    assert here.stale


async def test_a_file_with_a_bom_is_read_as_an_editor_shows_it(
    facade: BackendFacade, project: Path
) -> None:
    # Windows editors write a BOM; the editor's buffer (and every position) has none.
    (project / "src" / "app.py").write_bytes(b"\xef\xbb\xbf" + APP.encode())
    store_result(facade, project, [NMAE])  # the tool read the file's bytes, BOM and all
    path = str(project / "src" / "app.py")
    info = await inspect(facade, path=path, line=5, character=19)
    (here,) = info.findings
    assert not here.stale and info.notes == ()  # it parses: no U+FEFF in the text
    assert info.entity is not None and info.entity.id == "py:function/app.greet"
    (from_buffer,) = (await inspect(facade, path=path, line=5, character=19, text=APP)).findings
    assert not from_buffer.stale
    (edited,) = (
        await inspect(facade, path=path, line=5, character=19, text=APP + "# edited\n")
    ).findings
    assert edited.stale


async def test_the_client_s_unsaved_text_is_what_is_summarised(
    facade: BackendFacade, project: Path
) -> None:
    buffer = "\n\n\nclass Draft:\n    pass\n"
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=4, text=buffer)
    assert info.entity is not None and info.entity.id == "py:class/app.Draft"
    store_result(facade, project, [NMAE])
    (here,) = (
        await inspect(
            facade, path=str(project / "src" / "app.py"), line=5, character=19, text=buffer
        )
    ).findings
    assert here.stale  # the buffer is not what was linted
    (here,) = (
        await inspect(facade, path=str(project / "src" / "app.py"), line=5, character=19, text=APP)
    ).findings
    assert not here.stale


async def test_a_resource_and_a_relative_path(facade: BackendFacade, project: Path) -> None:
    info = await inspect(facade, resource="proj", path="src/app.py", line=4)
    assert info.path == "src/app.py" and info.entity is not None


@pytest.mark.parametrize("path", ["../outside.py", "src/../../outside.py", "/etc/passwd"])
async def test_a_path_outside_the_resource_is_refused(
    facade: BackendFacade, project: Path, path: str
) -> None:
    with pytest.raises(OutsideRoot):
        await inspect(facade, resource="proj", path=path, line=0)


async def test_a_symlink_out_of_the_root_is_refused(
    facade: BackendFacade, project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("def s():\n    pass\n")
    (project / "link.py").symlink_to(secret)
    with pytest.raises(OutsideRoot):
        await inspect(facade, resource="proj", path="link.py", line=1)
    with pytest.raises(NotFound):  # absolute: it resolves outside every root
        await inspect(facade, path=str(project / "link.py"), line=1)


async def test_an_absolute_path_under_no_root_is_not_found(
    facade: BackendFacade, project: Path, tmp_path: Path
) -> None:
    with pytest.raises(NotFound):
        await inspect(facade, path=str(tmp_path / "elsewhere.py"), line=0)
    with pytest.raises(InvalidParams):
        await inspect(facade, path="relative.py", line=0)


async def test_large_binary_and_special_files_are_notes_not_hangs(
    facade: BackendFacade, project: Path
) -> None:
    big = project / "big.py"
    big.write_text("def f():\n" + "    x = 1\n" * 300_000)
    binary = project / "blob.py"
    binary.write_bytes(b"def f():\x00\n")
    latin = project / "latin.py"
    latin.write_bytes(b"def f():\n    return '\xe9'\n")
    fifo = project / "pipe.py"
    os.mkfifo(fifo)
    expected = {
        "big.py": "big.py is larger than 2,000,000 bytes: not read",
        "blob.py": "blob.py is a binary file: not read",
        "latin.py": "latin.py is not UTF-8 text: not read",
        "pipe.py": "pipe.py is not a regular file",
        "gone.py": "gone.py does not exist",
    }
    for name, note in expected.items():
        info = await inspect(facade, resource="proj", path=name, line=1)
        assert (info.entity, info.notes) == (None, (note,)), name


async def test_non_python_files_get_no_entity_and_no_notes(
    facade: BackendFacade, project: Path
) -> None:
    (project / "blob.bin").write_bytes(b"\x00\x01")
    (project / "notes.md").write_text("# def f():\n")
    for name in ("blob.bin", "notes.md"):
        info = await inspect(facade, resource="proj", path=name, line=0)
        assert (info.entity, info.notes) == (None, ()), name


async def test_a_syntax_error_is_a_note(facade: BackendFacade, project: Path) -> None:
    (project / "src" / "app.py").write_text("def broken(:\n    pass\n")
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=1)
    assert info.entity is None
    assert info.notes == ("src/app.py does not parse (line 1): invalid syntax",)


async def test_text_beyond_the_bound_is_invalid_params(
    facade: BackendFacade, project: Path
) -> None:
    with pytest.raises(InvalidParams) as caught:
        await inspect(facade, resource="proj", path="src/app.py", line=0, text="x" * 2_000_001)
    assert "params.text" in caught.value.message


async def test_the_declaration_line_shows_results_without_a_place(
    facade: BackendFacade, project: Path
) -> None:
    declared = Location(path="acp.toml", line=0, character=0)
    store_result(facade, project, [Finding(message="whole project")], declared_at=declared)
    (here,) = (await inspect(facade, resource="proj", path="acp.toml", line=0)).findings
    assert here.finding.message == "whole project" and here.description == "Lint the code"
