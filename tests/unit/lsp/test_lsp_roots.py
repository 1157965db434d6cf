"""Roots against the real backend (in-process on a fresh data dir)."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest_asyncio

from acp_client.client import AcpClient
from acp_client.connect import connect
from acp_client.models import Resource
from acp_client.paths import path_to_uri
from lsp_server.roots import Roots, contains


@pytest_asyncio.fixture
async def client(tmp_path: Path) -> AsyncIterator[AcpClient]:
    async with await connect("local", data_dir=tmp_path / "data") as client:
        yield client


async def test_nested_roots_deepest_wins(tmp_path: Path, client: AcpClient) -> None:
    inner = tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    (inner / "x.py").write_text("")
    (tmp_path / "outer" / "y.py").write_text("")
    outer_resource = await client.resource_register(str(tmp_path / "outer"))
    inner_resource = await client.resource_register(str(inner))
    roots = Roots()
    placed = await roots.place(client, path_to_uri(str(inner / "x.py")))
    assert placed is not None and placed.key == (inner_resource.id, "x.py")
    placed = await roots.place(client, path_to_uri(str(tmp_path / "outer" / "y.py")))
    assert placed is not None and placed.key == (outer_resource.id, "y.py")
    assert set(roots.resources) == {outer_resource.id, inner_resource.id}
    assert roots.uri_of(placed.key) == path_to_uri(str(tmp_path / "outer" / "y.py"))


async def test_unregistered_and_non_file_uris_have_no_place(
    tmp_path: Path, client: AcpClient
) -> None:
    (tmp_path / "loose").mkdir()
    roots = Roots()
    assert await roots.place(client, path_to_uri(str(tmp_path / "loose"))) is None
    assert await roots.place(client, "untitled:Untitled-1") is None
    assert await roots.place(client, "vscode-notebook-cell:/x.ipynb#W0sZmlsZQ") is None


async def test_symlink_out_of_a_resource_is_not_attributed(
    tmp_path: Path, client: AcpClient
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (elsewhere / "secret.py").write_text("")
    (project / "link.py").symlink_to(elsewhere / "secret.py")
    await client.resource_register(str(project))
    assert await Roots().place(client, path_to_uri(str(project / "link.py"))) is None


async def test_cache_until_the_registry_changes(tmp_path: Path, client: AcpClient) -> None:
    project = tmp_path / "late"
    project.mkdir()
    roots = Roots()
    uri = path_to_uri(str(project))
    assert await roots.place(client, uri) is None
    await client.resource_register(str(project))
    assert await roots.place(client, uri) is None  # cached answer
    roots.invalidate()
    assert await roots.place(client, uri) is not None


def test_containment_includes_sandbox_roots() -> None:
    resource = Resource(
        id="R", name="r", root="/w/app", sandbox_roots=("/sb/1",), created_at=datetime.now(UTC)
    )
    assert contains(resource, "/w/app/a.py") and contains(resource, "/sb/1/a.py")
    assert not contains(resource, "/w/application/a.py")


def test_uris_are_spelled_as_the_editor_spells_them(tmp_path: Path) -> None:
    real = tmp_path / "real" / "my app"
    (real / "src").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    roots = Roots()
    roots.remember(Resource(id="R", name="app", root=str(real), created_at=datetime.now(UTC)))
    key = ("R", "src/a b.py")
    assert roots.uri_of(key) == path_to_uri(str(real / "src" / "a b.py"))  # no folder known
    folder_uri = path_to_uri(str(tmp_path / "link" / "my app"))
    roots.set_folders([folder_uri])
    assert roots.uri_of(key) == f"{folder_uri}/src/a%20b.py"
    roots.note_uri(key, "file:///as/opened.py")
    assert roots.uri_of(key) == "file:///as/opened.py"


def test_a_windows_folder_keeps_its_drive_spelling_and_an_opened_file_its_own() -> None:
    """VS Code on Windows sends ``file:///c%3A/...``; other clients
    ``file:///C:/...``. A file never opened is spelled under the folder as
    the editor sent it; one opened under its own spelling keeps that, and a
    change of spelling is told first (to retire the old one)."""
    roots = Roots()
    roots.remember(Resource(id="R", name="app", root="c:/src/app", created_at=datetime.now(UTC)))
    roots.set_folders(["file:///c%3A/src/app"])
    assert roots.path_of(("R", "dir [1]/a #b.py")) == "c:/src/app/dir [1]/a #b.py"
    assert (
        roots.uri_of(("R", "dir [1]/a #b.py")) == "file:///c%3A/src/app/dir%20%5B1%5D/a%20%23b.py"
    )
    told: list[object] = []
    roots.on_respell(told.append)
    roots.note_uri(("R", "é.py"), "file:///C:/src/app/%C3%A9.py")
    assert told == [("R", "é.py")]
    assert roots.uri_of(("R", "é.py")) == "file:///C:/src/app/%C3%A9.py"
    roots.note_uri(("R", "é.py"), "file:///C:/src/app/%C3%A9.py")  # the same: nothing to tell
    assert told == [("R", "é.py")]


def test_no_path_leaves_its_root() -> None:
    roots = Roots()
    roots.remember(Resource(id="R", name="app", root="/w/app", created_at=datetime.now(UTC)))
    for escaping in ("../x.py", "a/../../x.py", "/etc/passwd"):
        assert roots.path_of(("R", escaping)) is None
        assert roots.uri_of(("R", escaping)) is None
