"""Completion and suppression, against snapshots: ``acp.toml``'s keys and
values from the backend's schema (a broken file too), a tool's codes inside
its suppression comment, and "Suppress *code* on this line" writing or
extending the one comment."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from lsprotocol import types

from acp_client.models import (
    SuppressPlace,
    SuppressSpec,
    ValidationMode,
    ValidationResult,
    ValidationSpec,
)
from acp_client.operations import PresetInfo
from acp_client.text import digest
from lsp_server.code_actions import offered
from lsp_server.completion import completed
from lsp_server.features.declarations import Declarations
from lsp_server.features.hover import Hover
from lsp_server.features.suppress import Suppress
from lsp_server.features.suppress.comments import Form, find, suppression, typing
from lsp_server.snapshot import Snapshot
from tests.support.edit_text import apply_edits
from tests.support.factories import finding, result
from tests.unit.lsp.fakes import calls, schema, snapshot

NOQA = SuppressSpec(comment="# noqa: {codes}")
TYPE_IGNORE = SuppressSpec(comment="# type: ignore[{codes}]", first=True)
SHELLCHECK = SuppressSpec(
    comment="# shellcheck disable={codes}", where=SuppressPlace.LINE_ABOVE, separator=","
)
YAMLLINT = SuppressSpec(
    comment="# yamllint disable-line {codes}",
    where=SuppressPlace.LINE_ABOVE,
    separator=" ",
    code="rule:{code}",
)


def features() -> list[Any]:
    backend_calls, editor = calls()
    return [Suppress(editor, backend_calls), Declarations(editor, backend_calls)]


def labels(shot: Snapshot, line: int, character: int) -> list[str]:
    found = completed(shot, types.Position(line, character), features())
    return [item.label for item in found.items] if found else []


def item(shot: Snapshot, line: int, character: int, label: str) -> types.CompletionItem:
    found = completed(shot, types.Position(line, character), features())
    assert found is not None
    return next(i for i in found.items if i.label == label)


def toml(text: str) -> Snapshot:
    return snapshot(text, path="acp.toml", declares=schema())


# --- acp.toml ----------------------------------------------------------------


def test_the_keys_of_a_validation_table_with_their_docs_required_first() -> None:
    shot = toml('[[validations]]\nname = "lint"\n\n')
    keys = labels(shot, 2, 0)
    assert "name" not in keys  # already set in this table
    assert {"mode", "command", "format", "preset", "suppress", "applies_to"} <= set(keys)
    mode = item(shot, 2, 0, "mode")
    assert mode.sort_text is not None and mode.sort_text.startswith("0")  # required
    assert isinstance(mode.documentation, types.MarkupContent)
    assert "`required`, `informational`" in mode.documentation.value
    assert mode.text_edit is not None and mode.text_edit.new_text == "mode = "


def test_the_values_of_an_enumeration_quoted_or_inside_a_quote() -> None:
    shot = toml('[[validations]]\nmode = \nformat = "sa')
    assert labels(shot, 1, 7) == ["required", "informational"]
    required = item(shot, 1, 7, "required")
    assert required.text_edit is not None and required.text_edit.new_text == '"required"'
    sarif = item(shot, 2, 12, "sarif")
    assert sarif.text_edit is not None and sarif.text_edit.new_text == 'sarif"'  # closed too
    closed = toml('[[validations]]\nformat = "sa"')  # the editor closed the quote itself
    assert item(closed, 1, 12, "sarif").text_edit.new_text == "sarif"  # type: ignore[union-attr]
    assert isinstance(sarif.documentation, types.MarkupContent)
    assert "SARIF" in sarif.documentation.value  # the format's own doc


def test_presets_say_what_they_fill_in_and_whether_their_tool_is_there() -> None:
    declares = schema()
    present = declares.presets[0]
    missing = PresetInfo(
        name="nothere",
        summary="a tool nobody has",
        fields={"command": ["nothere", "{files}"]},
        executable="nothere",
        on_path=False,
        install="pip install nothere",
    )
    shot = replace(toml('[[validations]]\npreset = "'), schema=replace_presets(declares, missing))
    names = labels(shot, 1, 10)
    assert present.name in names and "nothere" in names
    absent = item(shot, 1, 10, "nothere")
    assert absent.detail == "a tool nobody has (nothere not on PATH)"
    assert isinstance(absent.documentation, types.MarkupContent)
    assert "not on PATH: pip install nothere" in absent.documentation.value
    assert 'command = ["nothere", "{files}"]' in absent.documentation.value


def replace_presets(declares: Any, extra: PresetInfo) -> Any:
    return declares.model_copy(update={"presets": (*declares.presets, extra)})


def test_a_broken_file_still_completes_inside_a_recognisable_table() -> None:
    broken = '[[validations]]\nname = "a\ncommand = [\n  "x",\n]\nmo\n\n[tool]\nx = '
    shot = toml(broken)
    assert "mode" in labels(shot, 6, 2)  # after an unclosed string and a multi-line array
    assert labels(shot, 4, 3) == []  # inside the array
    assert labels(shot, 9, 4) == []  # another table


def test_no_schema_no_acp_toml_completion_and_none_elsewhere() -> None:
    assert labels(snapshot("[[validations]]\n", path="acp.toml"), 1, 0) == []
    assert labels(snapshot("mode = ", declares=schema()), 0, 7) == []  # not acp.toml


async def test_hover_on_a_key_shows_its_doc() -> None:
    backend_calls, editor = calls()
    shot = toml('[[validations]]\nmode = "required"\n')
    answer = await Hover(editor, backend_calls).hover(shot, types.Position(1, 2))
    assert answer is not None and isinstance(answer.contents, types.MarkupContent)
    assert answer.contents.value.startswith("**mode** (enumeration:")
    assert await Hover(editor, backend_calls).hover(shot, types.Position(1, 12)) is None


# --- suppression comments ----------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "line", "expected"),
    [
        (NOQA, "import os", "import os  # noqa: F401"),
        (NOQA, "import os  # noqa: E501", "import os  # noqa: E501, F401"),
        (NOQA, "import os  # noqa: E501  # why", "import os  # noqa: E501, F401  # why"),
        (TYPE_IGNORE, "x = f()", "x = f()  # type: ignore[F401]"),
        (TYPE_IGNORE, "x = f()  # why", "x = f()  # type: ignore[F401]  # why"),
        (TYPE_IGNORE, "x = f()  # type: ignore[a]", "x = f()  # type: ignore[a, F401]"),
        (TYPE_IGNORE, "x = '#'", "x = '#'  # type: ignore[F401]"),
    ],
)
def test_the_comment_is_written_or_extended_on_the_line(
    spec: SuppressSpec, line: str, expected: str
) -> None:
    edit = suppression([line], "a.py", 0, "F401", spec)
    assert edit is not None
    assert apply_text(line + "\n", edit) == expected + "\n"
    assert suppression([expected], "a.py", 0, "F401", spec) is None  # never twice


@pytest.mark.parametrize(
    ("spec", "text", "expected"),
    [
        (SHELLCHECK, "  echo $x\n", "  # shellcheck disable=SC2086\n  echo $x\n"),
        (
            SHELLCHECK,
            "  # shellcheck disable=SC2046\n  echo $x\n",
            "  # shellcheck disable=SC2046,SC2086\n  echo $x\n",
        ),
        (YAMLLINT, "a: b\r\n", "# yamllint disable-line rule:SC2086\r\na: b\r\n"),
    ],
)
def test_the_comment_goes_on_the_line_above_for_tools_that_read_it_there(
    spec: SuppressSpec, text: str, expected: str
) -> None:
    lines = text.replace("\r\n", "\n").split("\n")
    newline = "\r\n" if "\r\n" in text else "\n"
    at = len(lines) - 2
    edit = suppression(lines, "a.sh", at, "SC2086", spec, newline=newline)
    assert edit is not None and apply_text(text, edit) == expected


def apply_text(text: str, edit: Any) -> str:
    location = edit.location
    lsp = types.TextEdit(
        range=types.Range(
            types.Position(location.line, location.character),
            types.Position(
                location.end_line if location.end_line is not None else location.line,
                location.end_character
                if location.end_character is not None
                else location.character,
            ),
        ),
        new_text=edit.new_text,
    )
    return apply_edits(text, [lsp], "utf-32")


def test_reading_a_comment_and_the_code_being_typed() -> None:
    form = Form.of(YAMLLINT)
    written = find("# yamllint disable-line rule:a rule:b", form)
    assert written is not None and written.codes == ("a", "b")
    at = typing("x = f()  # type: ignore[arg, re", 31, Form.of(TYPE_IGNORE))
    assert at is not None and (at.typed, at.present) == ("re", ("arg", "re"))
    assert typing("x = f()  # type: ignore[arg] ", 29, Form.of(TYPE_IGNORE)) is None  # closed
    assert typing("x = f()  # noqa", 14, Form.of(NOQA)) is None  # before the codes


def ruff_result() -> ValidationResult:
    return result(
        "ruff",
        findings=[
            finding("a.py", 0, 7, "`os` imported but unused", end_character=9, code="F401"),
            finding("a.py", 1, 0, "line too long", code="E501"),
            finding("b.py", 0, 0, "bare except", code="E722"),
            finding("a.py", 1, 0, "no code"),
        ],
    )


def ruff_spec(suppress: SuppressSpec | None = NOQA) -> ValidationSpec:
    return ValidationSpec(name="ruff", mode=ValidationMode.REQUIRED, suppress=suppress)


def test_codes_in_a_comment_those_of_its_line_first() -> None:
    r = ruff_result()
    text = "import os  # noqa: \nx = 1\n"
    shot = snapshot(text, results=[r], specs={"ruff": ruff_spec()})
    assert labels(shot, 0, 19) == ["F401", "E501", "E722"]
    assert item(shot, 0, 19, "F401").label_details is None  # the profile shows none
    shot = replace(shot, support=replace(shot.support, completion_label_details=True))
    f401 = item(shot, 0, 19, "F401")
    assert f401.sort_text == "0F401" and f401.label_details is not None
    assert f401.label_details.description == "on this line"
    shot = snapshot("import os  # noqa: F401, E", results=[r], specs={"ruff": ruff_spec()})
    assert labels(shot, 0, 26) == ["E501", "E722"]  # F401 is there already; typed "E"


def test_no_codes_for_a_tool_the_resource_does_not_use_or_without_suppress() -> None:
    r = ruff_result()
    text = "import os  # type: ignore[\n"
    assert labels(snapshot(text, results=[r], specs={"ruff": ruff_spec()}), 0, 26) == []
    assert (
        labels(snapshot("x  # noqa: ", results=[r], specs={"ruff": ruff_spec(None)}), 0, 11) == []
    )


def test_suppress_on_this_line_is_offered_where_a_finding_has_a_code() -> None:
    r = ruff_result()
    text = "import os\nx = 1\n"
    shot = snapshot(text, results=[r], specs={"ruff": ruff_spec()})
    backend_calls, editor = calls()
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(shot.uri or ""),
        range=types.Range(types.Position(0, 8), types.Position(0, 8)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    (action,) = offered(shot, params, [Suppress(editor, backend_calls)]) or []
    assert action.title == "Suppress F401 on this line (ruff)"
    assert action.kind == types.CodeActionKind.QuickFix and action.edit is not None
    (change,) = action.edit.document_changes or ()
    assert isinstance(change, types.TextDocumentEdit)
    assert apply_edits(text, list(change.edits), "utf-16") == "import os  # noqa: F401\nx = 1\n"
    params.range = types.Range(types.Position(1, 0), types.Position(1, 0))
    titles = [a.title for a in offered(shot, params, [Suppress(editor, backend_calls)]) or ()]
    assert titles == ["Suppress E501 on this line (ruff)"]  # the finding without a code: none
    read_other = r.model_copy(update={"file_hashes": {"a.py": digest("import sys\n")}})
    other = snapshot(text, results=[read_other], specs={"ruff": ruff_spec()})
    assert offered(other, params, [Suppress(editor, backend_calls)]) == []  # lines moved since
