"""Validation results reach every editor profile with the right severity,
place and encoding; push and pull serve the same store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from lsprotocol.types import DiagnosticSeverity as Sev

from acp_client.events import ValidationCompleted, ValidationStarted
from acp_client.models import Location, ValidationMode, ValidationSummary
from tests.support.factories import finding, result
from tests.support.lsp_harness import PROFILES_AND_MODES, PULL, Backend, Starter, project, uri
from tests.support.waiting import until

REQ, INFO = ValidationMode.REQUIRED, ValidationMode.INFORMATIONAL
# Emoji (2 UTF-16 units, 4 UTF-8 bytes) and CJK (1 unit, 3 bytes) before the finding.
UNICODE_LINE = 'greeting = "😀 你好"  # TODO translate'


def expected_column(line: str, code_points: int, encoding: str) -> int:
    prefix = line[:code_points]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_severity_table(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root = project(tmp_path / "app", {"a.py": "import os\nx = 1\ny = 2\nz = 3\n"})
    resource = await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    # Pull is offered only to clients that can also be told to re-pull.
    assert (session.capabilities.diagnostic_provider is not None) == session.pull
    session.open(root / "a.py")
    backend.publish(
        result("ruff", REQ, False, [finding("a.py", 0, 7, "unused")], resource=resource)
    )
    backend.publish(result("todo", INFO, False, [finding("a.py", 1, 0, "todo")], resource=resource))
    backend.publish(result("docs", INFO, True, [finding("a.py", 2, 0, "fyi")], resource=resource))
    backend.publish(
        result("types", REQ, True, [finding("a.py", 3, 0, "ignored")], resource=resource)
    )
    shown = await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 3)
    by_source = {d.source: d for d in shown}
    assert by_source["ruff"].severity == Sev.Error
    assert by_source["todo"].severity == Sev.Warning
    assert by_source["docs"].severity == Sev.Hint
    assert "types" not in by_source
    assert by_source["ruff"].range.start == types.Position(0, 7)
    assert by_source["ruff"].data["validation"] == "ruff"


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_required_pass_clears_only_its_validation(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root = project(tmp_path / "app", {"a.py": "a\nb\n"})
    resource = await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    session.open(root / "a.py")
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "bad")], resource=resource))
    backend.publish(result("todo", INFO, False, [finding("a.py", 1, 0, "todo")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 2)
    backend.publish(result("ruff", REQ, True, resource=resource))
    shown = await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    assert shown[0].source == "todo"


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_location_less_result_anchors_on_its_declaration(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    toml = '[[validations]]\nname = "tests"\nmode = "required"\ncommand = ["pytest"]\n'
    root = project(tmp_path / "app", {"acp.toml": toml})
    resource = await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    declared = Location(path="acp.toml", line=1, character=0)
    backend.publish(
        result(
            "tests", REQ, False, message="3 tests failed", declared_at=declared, resource=resource
        )
    )
    (shown,) = await session.wait_diagnostics(root / "acp.toml", lambda d: len(d) == 1)
    assert shown.severity == Sev.Error and shown.message == "3 tests failed"
    assert shown.range.start == types.Position(1, 0)
    assert shown.range.end == types.Position(1, len('name = "tests"'))


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_columns_in_the_negotiated_encoding(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root = project(tmp_path / "app", {"hello.py": f"import os\n{UNICODE_LINE}\n"})
    resource = await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    start = UNICODE_LINE.index("TODO")
    end = start + len("TODO")
    backend.publish(
        result(
            "todo",
            INFO,
            False,
            [finding("hello.py", 1, start, "todo", end_line=1, end_character=end)],
            resource=resource,
        )
    )
    # Unopened: converted against the file on disk.
    (shown,) = await session.wait_diagnostics(root / "hello.py", lambda d: len(d) == 1)
    encoding = session.encoding
    assert shown.range.start.character == expected_column(UNICODE_LINE, start, encoding)
    assert shown.range.end.character == expected_column(UNICODE_LINE, end, encoding)
    if profile == "visual-studio-code":
        assert (encoding, shown.range.start.character) == ("utf-16", start + 1)
    # Opened with other text on that line: converted against the buffer.
    edited = 'greeting = "😀😀 你好"  # TODO translate'
    session.open(root / "hello.py", text=f"import os\n{edited}\n")
    await session.wait_diagnostics(
        root / "hello.py",
        lambda d: (
            len(d) == 1 and d[0].range.start.character == expected_column(edited, start, encoding)
        ),
    )


@pytest.mark.parametrize(("profile", "mode"), PROFILES_AND_MODES)
async def test_coalescing_under_a_burst(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str, mode: str
) -> None:
    root = project(tmp_path / "app", {"a.py": "x\n" * 200})
    resource = await backend.register(root)
    session = await lsp(profile, [root], mode=mode)
    session.open(root / "a.py")
    for n in range(1, 101):
        backend.publish(
            result(
                "ruff",
                REQ,
                False,
                [finding("a.py", i, 0, f"f{i}") for i in range(n)],
                resource=resource,
            )
        )
    shown = await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 100)
    assert sorted(d.message for d in shown) == sorted(f"f{i}" for i in range(100))
    if session.pull:
        assert session.published == []
        return
    # The window itself is timed in the unit tests; received times here carry
    # the client's own scheduling jitter, so only the count is asserted.
    publishes = [p for _, p in session.published if p.uri == uri(root / "a.py")]
    assert len(publishes) < 50, "a burst of 100 results must not give 100 publishes"
    assert len(publishes[-1].diagnostics) == 100


async def test_push_carries_the_document_version(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {"a.py": "x\n"})
    resource = await backend.register(root)
    session = await lsp("neovim@v0.7", [root])
    session.open(root / "a.py")
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "bad")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)

    def last() -> types.PublishDiagnosticsParams:
        return [p for _, p in session.published if p.uri == uri(root / "a.py")][-1]

    # Shown before the server has placed the open document: as on disk, with
    # no version; once placed, again with the editor's version.
    await until(lambda: last().version == 1)
    assert len(last().diagnostics) == 1


async def test_pull_client_gets_result_ids_unchanged_reports_and_refresh(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    root = project(tmp_path / "app", {"a.py": "x\n", "b.py": "y\n"})
    resource = await backend.register(root)
    session = await lsp(PULL, [root])
    client = session.client
    session.open(root / "a.py")
    backend.publish(result("ruff", REQ, False, [finding("a.py", 0, 0, "bad")], resource=resource))
    await until(lambda: client.diagnostic_refresh_count >= 1)
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    refreshes = client.diagnostic_refresh_count
    identifier = types.TextDocumentIdentifier(uri(root / "a.py"))
    first = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=identifier)
    )
    assert isinstance(first, types.RelatedFullDocumentDiagnosticReport)
    assert [d.message for d in first.items] == ["bad"] and first.result_id
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=identifier, previous_result_id=first.result_id)
    )
    assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
    backend.publish(result("ruff", REQ, False, [finding("b.py", 0, 0, "moved")], resource=resource))
    await until(lambda: client.diagnostic_refresh_count > refreshes)
    workspace = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(
            previous_result_ids=[types.PreviousResultId(uri(root / "a.py"), first.result_id)]
        )
    )
    reports = {report.uri: report for report in workspace.items}
    assert reports[uri(root / "a.py")].kind == "full" and not reports[uri(root / "a.py")].items
    assert [d.message for d in reports[uri(root / "b.py")].items] == ["moved"]
    assert session.published == []  # a pull client is never pushed to


async def test_a_run_of_several_validations_publishes_each_file_once(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    """Overlapping validations: their results are held until the run ends,
    so a file is sent once with all of them, not once per validation."""
    root = project(tmp_path / "app", {"a.py": "x\n" * 10})
    resource = await backend.register(root)
    session = await lsp("neovim@v0.7", [root])  # push only
    session.open(root / "a.py")
    await session.wait_in_play(root)
    # Until the first listing is over: a run that started and ended meanwhile
    # is covered by the listing, and its hold ends with it (the end was not
    # seen as an event). A result shown before then is no sign of it.
    await session.wait_listed(root / "a.py")
    backend.publish(result("seed", REQ, False, [finding("a.py", 9, 0, "seed")], resource=resource))
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 1)
    before = len(session.published)
    names = tuple(f"v{k}" for k in range(4))
    backend.publish_event(
        ValidationStarted, run_id="run-many", resource_id=resource.id, validations=names
    )
    for k, name in enumerate(names):
        done = result(name, REQ, False, [finding("a.py", k, 0, name)], resource=resource)
        backend.publish(done.model_copy(update={"run_id": "run-many"}))
        await asyncio.sleep(0.08)  # more than the publish window: each would go out alone
    backend.publish_event(
        ValidationCompleted,
        run_id="run-many",
        resource_id=resource.id,
        summary=ValidationSummary(required_failed=4),
    )
    shown = await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 5)
    assert sorted(d.message for d in shown) == ["seed", *names]
    publishes = [p for _, p in session.published[before:] if p.uri == uri(root / "a.py")]
    assert [len(p.diagnostics) for p in publishes] == [5]


async def test_a_long_run_keeps_open_files_current_and_the_rest_until_it_ends(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    """A run of several validations: each file's first findings show within
    about a second; after that an open file follows every validation, while
    a file not open waits for the run's end (ADR 0015)."""
    root = project(tmp_path / "app", {"a.py": "x\n" * 10, "b.py": "y\n" * 10})
    resource = await backend.register(root)
    session = await lsp("neovim@v0.7", [root])  # push only
    session.open(root / "a.py")
    backend.publish(result("seed", REQ, False, [finding("a.py", 9, 0, "seed")], resource=resource))

    def sent(name: str) -> list[types.PublishDiagnosticsParams]:
        return [p for _, p in session.published if p.uri == uri(root / name)]

    await until(lambda: any(p.version == 1 for p in sent("a.py")))  # a.py is placed
    await session.wait_listed(root / "a.py")  # the first listing would end the hold
    names = ("v0", "v1", "v2")
    backend.publish_event(
        ValidationStarted, run_id="run-long", resource_id=resource.id, validations=names
    )

    def finish(k: int) -> None:
        findings = [finding(name, k, 0, names[k]) for name in ("a.py", "b.py")]
        done = result(names[k], REQ, False, findings, resource=resource)
        backend.publish(done.model_copy(update={"run_id": "run-long"}))

    finish(0)
    await session.wait_diagnostics(root / "b.py", lambda d: len(d) == 1)  # the first tick
    finish(1)
    await session.wait_diagnostics(root / "a.py", lambda d: len(d) == 3)  # the next tick
    await asyncio.sleep(0.3)  # b.py would have gone out with a.py
    assert [len(p.diagnostics) for p in sent("b.py")] == [1]
    finish(2)
    backend.publish_event(
        ValidationCompleted,
        run_id="run-long",
        resource_id=resource.id,
        summary=ValidationSummary(required_failed=3),
    )
    await session.wait_diagnostics(root / "b.py", lambda d: len(d) == 3)
    assert [len(p.diagnostics) for p in sent("b.py")] == [1, 3]
