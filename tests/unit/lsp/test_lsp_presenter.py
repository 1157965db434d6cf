import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest import MonkeyPatch

from acp_client.models import Finding, Location, RelatedLocation, Resource
from acp_client.paths import path_to_uri
from lsp_server import results as store_module
from lsp_server.documents import Document
from lsp_server.features.diagnostics.presenter import Presenter
from tests.support.factories import finding, result
from tests.unit.lsp.fakes import FakeSource

KEY = ("R", "a.py")


def publishes(view: Presenter) -> list[types.PublishDiagnosticsParams]:
    """What the presenter pushes, read back as the editor's LSP library reads
    it; the text exactly what ``json.dumps`` writes for that content."""
    converter = get_converter()
    texts = view.publish_params(KEY)
    assert all(text == json.dumps(json.loads(text)) for text in texts)
    return [converter.structure(json.loads(text), types.PublishDiagnosticsParams) for text in texts]


def presenter(root: Path) -> tuple[Presenter, FakeSource]:
    source = FakeSource()
    source.roots.remember(
        Resource(id="R", name="app", root=str(root), created_at=datetime.now(UTC))
    )
    return Presenter(source, "utf-16"), source


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_unopened_file_is_published_by_its_path_with_disk_text(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("é = 1\n")
    view, source = presenter(tmp_path)
    assert source.results.apply(result(findings=[finding("a.py", 0, 4, "m")])) == {KEY}
    (params,) = publishes(view)
    assert params.uri == path_to_uri(str(tmp_path / "a.py"))
    assert params.version is None and params.diagnostics[0].range.start.character == 4


def test_open_document_gives_uri_version_and_live_text(tmp_path: Path) -> None:
    view, source = presenter(tmp_path)
    source.results.apply(result(findings=[finding("a.py", 0, 2, "m")]))
    source.documents[KEY] = Document("file:///editor/a.py", 3, "😀😀x\n")
    (params,) = publishes(view)
    assert (params.uri, params.version) == ("file:///editor/a.py", 3)
    assert params.diagnostics[0].range.start.character == 4  # two emoji: 4 UTF-16 units


def test_result_id_follows_marks_and_document_version(tmp_path: Path) -> None:
    view, source = presenter(tmp_path)
    source.results.apply(result(findings=[finding("a.py")]))
    first = view.result_id(KEY)
    assert isinstance(
        view.document_report(KEY, first), types.RelatedUnchangedDocumentDiagnosticReport
    )
    source.documents[KEY] = Document("file:///a.py", 2, "x\n")
    assert view.result_id(KEY) != first
    report = view.document_report(KEY, first)
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport) and len(report.items) == 1


def test_workspace_report_includes_emptied_files(tmp_path: Path) -> None:
    view, source = presenter(tmp_path)
    source.results.apply(result(findings=[finding("a.py")]))
    uri = path_to_uri(str(tmp_path / "a.py"))
    (full,) = view.workspace_reports({})
    assert isinstance(full, types.WorkspaceFullDocumentDiagnosticReport) and full.uri == uri
    (unchanged,) = view.workspace_reports({uri: full.result_id or ""})
    assert isinstance(unchanged, types.WorkspaceUnchangedDocumentDiagnosticReport)
    source.results.apply(result(passed=True, at=5))
    (emptied,) = view.workspace_reports({uri: full.result_id or ""})
    assert isinstance(emptied, types.WorkspaceFullDocumentDiagnosticReport) and not emptied.items


def test_a_publish_identical_to_the_last_one_is_not_sent_again(tmp_path: Path) -> None:
    view, source = presenter(tmp_path)
    source.results.apply(result(findings=[finding("a.py")]))
    assert len(publishes(view)) == 1
    assert publishes(view) == []
    source.results.apply(result(findings=[finding("a.py", message="other")]))
    assert len(publishes(view)) == 1


def test_a_file_shown_under_another_uri_before_is_cleared_there(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    view, source = presenter(tmp_path)
    source.results.apply(result(findings=[finding("a.py")]))
    (first,) = publishes(view)
    source.documents[KEY] = Document("file:///link/a.py", 1, "x = 1\n")
    cleared, shown = publishes(view)
    assert (cleared.uri, list(cleared.diagnostics)) == (first.uri, [])
    assert shown.uri == "file:///link/a.py" and len(shown.diagnostics) == 1


def test_marks_computed_on_other_text_are_held_back_from_an_open_buffer(tmp_path: Path) -> None:
    old, new = "import os\nx = 1\n", "x = 1\n"
    view, source = presenter(tmp_path)
    source.results.apply(
        result(
            validation="todo",
            findings=[finding("a.py", 1, 0, "on old text")],
            file_hashes={"a.py": sha(old)},
        )
    )
    source.results.apply(
        result(
            validation="ruff",
            findings=[finding("a.py", 0, 0, "on new text")],
            file_hashes={"a.py": sha(new)},
        )
    )
    source.documents[KEY] = Document("file:///a.py", 2, new)
    (params,) = publishes(view)
    assert [d.message for d in params.diagnostics] == ["on new text"]


def test_related_places_and_rule_links_push_and_pull_alike(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_text("s = '😀中文'; name = 1\n")
    view, source = presenter(tmp_path)
    view.related_information = view.code_description = True
    related = [
        RelatedLocation(
            location=Location(path="b.py", line=0, character=11, end_line=0, end_character=15),
            message="defined here",
        ),
        RelatedLocation(location=Location(path="a.py", line=0, character=0), message="used"),
        *(
            RelatedLocation(location=Location(path=path, line=0, character=0))
            for path in ("../out.py", "/etc/hosts", ".", "missing.py")  # nothing to point at
        ),
    ]
    found = Finding(
        location=Location(path="a.py", line=0, character=1),
        message="m",
        help_uri="https://example.org/R1",
        related=tuple(related),
    )
    source.results.apply(result(findings=[found]))
    source.documents[KEY] = Document("file:///editor/a.py", 1, "😀x\n")
    (pushed,) = publishes(view)
    report = view.document_report(KEY, None)
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert list(pushed.diagnostics) == list(report.items)
    (diagnostic,) = report.items
    assert diagnostic.code_description == types.CodeDescription("https://example.org/R1")
    assert [
        (
            r.location.uri,
            r.location.range.start.character,
            r.location.range.end.character,
            r.message,
        )
        for r in diagnostic.related_information or ()
    ] == [
        (path_to_uri(str(tmp_path / "b.py")), 12, 16, "defined here"),  # on disk, in UTF-16
        ("file:///editor/a.py", 0, 2, "used"),  # the open buffer: its URI and text
    ]
    view.related_information = view.code_description = False
    (plain,) = view.diagnostics(KEY)
    assert "relatedInformation" not in plain and "codeDescription" not in plain


def test_a_publish_builds_no_mark_per_finding(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    """The publish path converts the held results' findings as they are: a
    ``Mark`` each cost a 10,000-finding burst ~6 ms of its ~45."""

    def refused(*_: object) -> None:
        raise AssertionError("a Mark was built")

    monkeypatch.setattr(store_module, "mark_at", refused)
    (tmp_path / "a.py").write_text("x\n")
    view, source = presenter(tmp_path)
    source.results.apply(result(findings=[finding("a.py", 0, 0, f"m{n}") for n in range(3)]))
    (params,) = publishes(view)
    assert [d.message for d in params.diagnostics] == ["m0", "m1", "m2"]


def test_a_file_whose_uri_roots_respell_is_cleared_under_the_old_one(tmp_path: Path) -> None:
    """The last publish holds no URI when it is the one Roots spells; a
    workspace folder over a symlink (or a resource moved, or forgotten)
    spells it anew, and the old URI is still emptied, push and pull."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.py").write_text("x = 1\n")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    view, source = presenter(real)
    source.results.apply(result(findings=[finding("a.py")]))
    (first,) = publishes(view)
    (pulled,) = view.workspace_reports({})
    assert first.uri == pulled.uri == path_to_uri(str(real / "a.py"))
    folder = path_to_uri(str(tmp_path / "link"))
    view.roots.set_folders([folder])
    cleared, shown = publishes(view)
    assert (cleared.uri, list(cleared.diagnostics)) == (first.uri, [])
    assert shown.uri == f"{folder}/a.py" and len(shown.diagnostics) == 1
    assert publishes(view) == []
    emptied, full = view.workspace_reports({})
    assert (emptied.uri, list(emptied.items)) == (first.uri, [])
    assert full.uri == f"{folder}/a.py" and len(full.items) == 1
    view.roots.forget("R")
    source.results.forget_resource("R")
    (gone,) = publishes(view)
    assert (gone.uri, list(gone.diagnostics)) == (shown.uri, [])
