"""``context.inspect`` through the facade, on a real store and real files."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acp_backend.facade import BackendFacade
from acp_backend.ids import new_ulid
from acp_backend.inspect.excerpt import BLOCK_BUDGET
from acp_backend.inspect.service import INLINE_TEXT, RETIRED_FREE_DELAY, InspectService
from acp_backend.inspect.source import from_text
from acp_backend.inspect.syntax import Trees
from acp_client.errors import InvalidParams, NotFound, OutsideRoot
from acp_client.models import (
    ContextInfo,
    Finding,
    Location,
    ValidationMode,
    ValidationResult,
)
from acp_client.text import digests
from tests.support.git import AUTHOR, committed, hanging_git

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
    assert not here.stale
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


@pytest.mark.parametrize("text", ["", "x = 1\n", "\ufeffx = 1\n", "\ufeff\ufeffé", "a\ud800b"])
def test_a_client_s_text_is_named_by_its_own_digest_and_every_file_it_can_be(text: str) -> None:
    def sha(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    source = from_text(text)
    bare = text.removeprefix("\ufeff")
    assert source.sha256 == sha(text)
    assert source.digests == digests(text) == {sha(bare), sha("\ufeff" + bare)}


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


async def test_trees_pushed_out_are_freed_after_the_answer(
    facade: BackendFacade, project: Path
) -> None:
    """Issue 24 (5): a hover does not wait for the trees its parse pushed out
    of the cache to be freed; they are, just after."""
    inspector = facade.services.service(InspectService, InspectService)
    inspector.trees = Trees(budget=len(APP) + 10)
    await inspect(facade, path=str(project / "src" / "app.py"), line=4, text=APP)
    await inspect(facade, path=str(project / "src" / "app.py"), line=4, text=APP + "\n# x\n")
    assert inspector.trees.retired == 1  # kept past the answer
    await asyncio.sleep(RETIRED_FREE_DELAY + 0.05)
    assert inspector.trees.retired == 0


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


async def test_a_syntax_error_keeps_the_enclosing_definition_else_it_is_a_note(
    facade: BackendFacade, project: Path
) -> None:
    (project / "src" / "app.py").write_text("def broken(:\n    pass\n")
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=1)
    assert info.entity is not None and info.entity.name == "broken" and info.notes == ()
    (project / "src" / "app.py").write_text("x = 1\ny = (\n\n")
    info = await inspect(facade, path=str(project / "src" / "app.py"), line=0)
    assert info.entity is None
    assert info.notes == ("src/app.py does not parse (line 2)",)


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


# --- every language, snippets, history, bad input -----------------------------

CART = """\
// Cart helpers.

/** Adds up the prices. */
function total(items) {
  let sum = 0;
  // Prices are in cents;
  // items without one count as free.
  const free = 0;
  for (const item of items) {
    sum += item.prise;
  }
  return sum + item.prise;
}

function count(items) {
  return items.prise;
}
"""


def js_result(facade: BackendFacade, root: Path, lines: Sequence[int], **more: Any) -> None:
    (resource,) = facade.services.registry.resources()
    now = datetime.now(UTC)
    findings = tuple(
        Finding(
            location=Location(path="cart.js", line=n, character=0),
            message="Unknown property `prise`",
            code="no-prise",
            rule_description="Properties must be spelt right",
            help_uri="https://example.test/rules/no-prise",
        )
        for n in lines
    )
    facade.services.store.insert_result(
        ValidationResult(
            id=new_ulid(),
            validation="eslint",
            mode=ValidationMode.INFORMATIONAL,
            passed=False,
            resource_id=resource.id,
            run_id=new_ulid(),
            started_at=now,
            finished_at=now,
            findings=findings,
            **more,
        )
    )


async def test_a_javascript_function_its_first_lines_and_the_rule_s_other_findings(
    facade: BackendFacade, project: Path
) -> None:
    (project / "cart.js").write_text(CART)
    js_result(facade, project, [9, 11, 15])
    near = await inspect(facade, resource="proj", path="cart.js", line=4)
    assert near.entity is not None and near.items == ()  # its first lines are on screen
    info = await inspect(facade, resource="proj", path="cart.js", line=9)
    assert [here.validation for here in info.findings] == ["eslint"]
    entity = info.entity
    assert entity is not None
    assert (entity.id, entity.kind, entity.signature, entity.doc, entity.language) == (
        "js:function/cart.js#total",
        "function",
        "function total(items)",
        "Adds up the prices.",
        "javascript",
    )
    first, others = info.items  # the rule's description and link are the finding's
    assert first.title == "total (function), lines 4-13, 4 more"
    assert first.language == "javascript"
    assert first.body == (
        "function total(items) {\n  let sum = 0;\n  // Prices are in cents;\n"
        "  // items without one count as free.\n  const free = 0;\n"
        "  for (const item of items) {"
    )
    assert first.location == Location(path="cart.js", line=3, character=0, end_line=8)
    assert others.title == "2 more no-prise findings in this file (eslint)"
    assert others.body == "12: return sum + item.prise;\n16: return items.prise;"
    assert others.location == info.findings[0].finding.location  # the one it is about
    assert info.notes == () and info.history is None  # not a git work tree


async def test_snippets_keep_to_their_budget(facade: BackendFacade, project: Path) -> None:
    (project / "cart.js").write_text(CART.replace("item.prise", "item.prise" + "x" * 400))
    js_result(facade, project, list(range(17)))
    info = await inspect(facade, resource="proj", path="cart.js", line=9)
    assert len(info.items) == 2
    total = sum(len((item.title + "\n" + item.body).encode()) for item in info.items)
    lines = sum(len(item.body.split("\n")) for item in info.items if item.body)
    assert total <= 2048 + 64 and lines <= 14
    assert all(len(line) <= 120 for item in info.items for line in item.body.split("\n"))


async def test_the_line_s_last_commit_after_the_plans(facade: BackendFacade, project: Path) -> None:
    commit = committed(project, "Add the app")
    info = await inspect(facade, resource="proj", path="src/app.py", line=5)
    assert info.history is not None
    assert (info.history.commit, info.history.subject, info.history.author) == (
        commit,
        "Add the app",
        AUTHOR,
    )
    edited = APP.replace("nmae", "name")
    info = await inspect(facade, resource="proj", path="src/app.py", line=5, text=edited)
    assert info.history is not None and info.history.commit is None  # not committed yet


async def test_bad_input_gives_the_findings_alone_quickly(
    facade: BackendFacade, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed(project, "Add the app")
    fake = hanging_git(tmp_path / "bin", seconds=52.17)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    (project / "cart.js").write_bytes(b"function f() {\x00}\n")
    js_result(facade, project, [0])
    started = time.monotonic()
    info = await inspect(facade, resource="proj", path="cart.js", line=0)
    assert time.monotonic() - started < 2.5  # git was killed at its limit
    assert [h.validation for h in info.findings] == ["eslint"]
    assert (info.entity, info.history) == (None, None)
    assert info.notes == ("cart.js is a binary file: not read",)
    assert info.items == ()


async def test_a_ten_megabyte_minified_line_and_a_long_one_in_the_buffer(
    facade: BackendFacade, project: Path
) -> None:
    line = "var a=" + "[1,2,3]," * (10 * 1024 * 1024 // 8) + "0;\n"
    (project / "cart.js").write_text(line)
    js_result(facade, project, [0])
    info = await inspect(facade, resource="proj", path="cart.js", line=0)
    assert [h.validation for h in info.findings] == ["eslint"] and info.entity is None
    assert info.notes == ("cart.js is larger than 2,000,000 bytes: not read",)
    minified = "function f(a){" + "a=a+1;" * 300_000 + "}\n"
    info = await inspect(facade, resource="proj", path="cart.js", line=0, text=minified)
    assert [h.validation for h in info.findings] == ["eslint"] and info.entity is None
    # The note comes only from the check made before any parse (no clock:
    # a bound in seconds failed on a loaded machine, not on a slow path).
    assert info.notes == (
        "cart.js was not outlined: its lines are minified (over 1,000 characters)",
    )
    long_lines = "function f(a) {\n" + ("  a = a + 1; " * 60 + "\n") * 2000 + "}\n"
    info = await inspect(facade, resource="proj", path="cart.js", line=1, text=long_lines)
    assert info.entity is not None and info.entity.name == "f"
    assert all(len(line) <= 120 for item in info.items for line in item.body.split("\n"))


async def test_unknown_languages_and_deleted_files_give_the_findings_alone(
    facade: BackendFacade, project: Path
) -> None:
    (project / "notes.txt").write_text("function f() {}\n")
    info = await inspect(facade, resource="proj", path="notes.txt", line=0)
    assert (info.entity, info.notes, info.items) == (None, (), ())
    (project / "cart.js").write_text(CART)
    js_result(facade, project, [6])
    (project / "cart.js").unlink()  # between the request and the parse
    info = await inspect(facade, resource="proj", path="cart.js", line=6)
    assert [h.validation for h in info.findings] == ["eslint"] and info.entity is None
    assert info.notes == ("cart.js does not exist",)
    info = await inspect(facade, resource="proj", path="cart.js", line=6, text=CART)
    assert info.entity is not None and info.entity.name == "total"


async def test_a_shell_script_named_by_its_shebang(facade: BackendFacade, project: Path) -> None:
    script = "#!/usr/bin/env bash\n# Greets.\ngreet() {\n  echo hi\n}\n"
    (project / "greet").write_text(script)
    info = await inspect(facade, resource="proj", path="greet", line=3)
    assert info.entity is not None
    assert (info.entity.id, info.entity.signature, info.entity.doc) == (
        "sh:function/greet#greet",
        "greet()",
        "Greets.",
    )


async def test_a_key_path_in_yaml(facade: BackendFacade, project: Path) -> None:
    (project / "ci.yml").write_text("jobs:\n  test:\n    steps:\n      - run: pytest\n")
    info = await inspect(facade, resource="proj", path="ci.yml", line=3)
    assert info.entity is not None and info.entity.key_path == "jobs.test.steps[0].run"
    assert info.items == ()


async def test_a_long_file_is_outlined_from_an_excerpt(
    facade: BackendFacade, project: Path
) -> None:
    """Issue 24 (5): a cold hover in a long file parses the function around
    the line, not the file (no tree is kept of it); where indentation cannot
    be trusted (a function over the excerpt's budget) the file is parsed whole."""
    functions = "".join(
        f'def f{n}(a: int) -> int:\n    """Function {n}."""\n    return a + {n}\n\n\n'
        for n in range(2000)
    )
    assert len(functions) > INLINE_TEXT
    inspector = facade.services.service(InspectService, InspectService)
    path = str(project / "src" / "long.py")
    info = await inspect(facade, path=path, line=5002, text=functions)
    assert info.entity is not None and info.entity.name == "f1000"
    assert info.entity.doc == "Function 1000."
    assert len(inspector.trees) == 0
    huge = "def huge():\n" + "".join(f"    x{n} = {n}\n" for n in range(BLOCK_BUDGET // 8))
    info = await inspect(facade, path=path, line=100, text=functions + huge)
    assert info.entity is not None and info.entity.name == "f20"
    assert len(inspector.trees) == 0  # f20 is a small block: still an excerpt
    at_huge = functions.count("\n") + 100
    info = await inspect(facade, path=path, line=at_huge, text=functions + huge)
    assert info.entity is not None and info.entity.name == "huge"
    assert len(inspector.trees) == 1  # parsed whole, and kept
