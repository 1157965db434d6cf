import hashlib
from datetime import UTC, datetime
from pathlib import Path

from lsprotocol import types

from acp_client.models import Resource
from acp_client.paths import path_to_uri
from lsp_server.features.diagnostics.presenter import OpenDocument, Presenter
from lsp_server.features.diagnostics.store import DiagnosticsStore
from lsp_server.roots import Roots
from tests.unit.lsp.lsp_factories import finding, result

KEY = ("R", "a.py")


def presenter(root: Path) -> tuple[Presenter, list[tuple[str, str]]]:
    roots = Roots()
    roots.remember(Resource(id="R", name="app", root=str(root), created_at=datetime.now(UTC)))
    changed: list[tuple[str, str]] = []
    return Presenter(DiagnosticsStore(), roots, "utf-16", changed.append), changed


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_unopened_file_is_published_by_its_path_with_disk_text(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("é = 1\n")
    view, changed = presenter(tmp_path)
    view.apply(result(findings=[finding("a.py", 0, 4, "m")]))
    assert changed == [KEY]
    (params,) = view.publish_params(KEY)
    assert params.uri == path_to_uri(str(tmp_path / "a.py"))
    assert params.version is None and params.diagnostics[0].range.start.character == 4


def test_results_of_resources_not_in_play_are_ignored(tmp_path: Path) -> None:
    view, changed = presenter(tmp_path)
    view.apply(result(findings=[finding("a.py")], resource_id="OTHER"))
    assert changed == [] and view.store.files() == []


def test_open_document_gives_uri_version_and_live_text(tmp_path: Path) -> None:
    view, _ = presenter(tmp_path)
    view.apply(result(findings=[finding("a.py", 0, 2, "m")]))
    view.opened(KEY, OpenDocument("file:///editor/a.py", 3, "😀😀x\n"), clear_stale=False)
    (params,) = view.publish_params(KEY)
    assert (params.uri, params.version) == ("file:///editor/a.py", 3)
    assert params.diagnostics[0].range.start.character == 4  # two emoji: 4 UTF-16 units


def test_result_id_follows_marks_and_document_version(tmp_path: Path) -> None:
    view, _ = presenter(tmp_path)
    view.apply(result(findings=[finding("a.py")]))
    first = view.result_id(KEY)
    assert isinstance(
        view.document_report(KEY, first), types.RelatedUnchangedDocumentDiagnosticReport
    )
    view.edited(KEY, OpenDocument("file:///a.py", 2, "x\n"), clear=False)
    assert view.result_id(KEY) != first
    report = view.document_report(KEY, first)
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport) and len(report.items) == 1


def test_clear_stale_on_open_uses_the_results_file_hashes(tmp_path: Path) -> None:
    view, _ = presenter(tmp_path)
    view.apply(result(findings=[finding("a.py")], file_hashes={"a.py": sha("old\n")}))
    view.opened(KEY, OpenDocument("file:///a.py", 1, "old\n"), clear_stale=True)
    assert len(view.store.marks(KEY)) == 1  # the content the validator saw: kept
    view.opened(KEY, OpenDocument("file:///a.py", 2, "new\n"), clear_stale=True)
    assert view.store.marks(KEY) == []


def test_workspace_report_includes_emptied_files(tmp_path: Path) -> None:
    view, _ = presenter(tmp_path)
    view.apply(result(findings=[finding("a.py")]))
    uri = path_to_uri(str(tmp_path / "a.py"))
    (full,) = view.workspace_reports({})
    assert isinstance(full, types.WorkspaceFullDocumentDiagnosticReport) and full.uri == uri
    (unchanged,) = view.workspace_reports({uri: full.result_id or ""})
    assert isinstance(unchanged, types.WorkspaceUnchangedDocumentDiagnosticReport)
    view.apply(result(passed=True, at=5))
    (emptied,) = view.workspace_reports({uri: full.result_id or ""})
    assert isinstance(emptied, types.WorkspaceFullDocumentDiagnosticReport) and not emptied.items


def test_a_publish_identical_to_the_last_one_is_not_sent_again(tmp_path: Path) -> None:
    view, _ = presenter(tmp_path)
    view.apply(result(findings=[finding("a.py")]))
    assert len(view.publish_params(KEY)) == 1
    assert view.publish_params(KEY) == []
    view.apply(result(findings=[finding("a.py", message="other")]))
    assert len(view.publish_params(KEY)) == 1


def test_a_file_shown_under_another_uri_before_is_cleared_there(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    view, _ = presenter(tmp_path)
    view.apply(result(findings=[finding("a.py")]))
    (first,) = view.publish_params(KEY)
    view.opened(KEY, OpenDocument("file:///link/a.py", 1, "x = 1\n"), clear_stale=False)
    cleared, shown = view.publish_params(KEY)
    assert (cleared.uri, cleared.diagnostics) == (first.uri, [])
    assert shown.uri == "file:///link/a.py" and len(shown.diagnostics) == 1


def test_marks_computed_on_other_text_are_held_back_from_an_open_buffer(tmp_path: Path) -> None:
    old, new = "import os\nx = 1\n", "x = 1\n"
    view, _ = presenter(tmp_path)
    view.apply(
        result(
            validation="todo",
            findings=[finding("a.py", 1, 0, "on old text")],
            file_hashes={"a.py": sha(old)},
        )
    )
    view.apply(
        result(
            validation="ruff",
            findings=[finding("a.py", 0, 0, "on new text")],
            file_hashes={"a.py": sha(new)},
        )
    )
    view.opened(KEY, OpenDocument("file:///a.py", 2, new), clear_stale=False)
    (params,) = view.publish_params(KEY)
    assert [d.message for d in params.diagnostics] == ["on new text"]
