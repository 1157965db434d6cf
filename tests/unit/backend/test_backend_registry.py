"""Resource registry: registering, and attributing a path to exactly one root or none."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from acp_backend.eventlog import EventLog
from acp_backend.registry import Registry, RootEntry, resolve_path, root_entries
from acp_backend.store import Store
from acp_client.errors import AlreadyExists, InvalidParams, NotFound
from acp_client.models import Resource
from acp_client.paths import normalize_path, path_to_uri


def make_worktree(path: Path) -> Path:
    """A directory shaped like ``git worktree add`` leaves it: ``.git`` is a file."""
    path.mkdir(parents=True)
    (path / ".git").write_text("gitdir: /somewhere/.git/worktrees/wt\n")
    (path / "app.py").write_text("")
    return path


# --- registering ---------------------------------------------------------------


def test_register_defaults_the_name_to_the_directory(registry: Registry, workspace: Path) -> None:
    resource = registry.register(str(workspace))
    assert (resource.name, resource.root) == ("project", str(workspace))
    assert registry.resources() == [resource]
    assert registry.get(resource.id) == registry.get("project") == resource


def test_register_accepts_a_file_uri_and_stores_the_real_path(
    registry: Registry, tmp_path: Path, workspace: Path
) -> None:
    link = tmp_path / "link to project"
    link.symlink_to(workspace)
    resource = registry.register(path_to_uri(str(link)), name="via-link")
    assert resource.root == str(workspace)  # one root, whatever the spelling


def test_duplicate_names_and_roots_are_already_exists(
    registry: Registry, workspace: Path, tmp_path: Path
) -> None:
    registry.register(str(workspace))
    other = tmp_path / "other" / "project"
    other.mkdir(parents=True)
    with pytest.raises(AlreadyExists, match="named 'project'") as caught:
        registry.register(str(other))
    assert caught.value.remedy is not None and "--name" in caught.value.remedy
    with pytest.raises(AlreadyExists, match="already registered"):
        registry.register(str(workspace) + "/src/..", name="again")
    assert len(registry.resources()) == 1


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("relative/dir", InvalidParams, "not an absolute path"),
        ("", InvalidParams, "must not be empty"),
        ("untitled:Untitled-1", InvalidParams, "not a file URI"),
        ("/no/such/dir", NotFound, "no such directory"),
        ("/tmp/nul\x00byte", InvalidParams, "null byte"),
        ("/" + "x" * 5000, NotFound, "no such directory"),
    ],
)
def test_bad_paths_are_refused_precisely(
    registry: Registry, path: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        registry.register(path)


def test_a_file_is_not_a_directory(registry: Registry, workspace: Path) -> None:
    with pytest.raises(InvalidParams, match="not a directory"):
        registry.register(str(workspace / "src" / "main.py"))


@pytest.mark.parametrize("name", ["", " padded", "a/b", "tab\there", "x" * 129])
def test_bad_names_are_refused(registry: Registry, workspace: Path, name: str) -> None:
    with pytest.raises(InvalidParams, match=r"params\.name"):
        registry.register(str(workspace), name=name)


def test_an_id_wins_over_a_name_that_looks_like_it(
    registry: Registry, workspace: Path, tmp_path: Path
) -> None:
    first = registry.register(str(workspace))
    other = tmp_path / "other"
    other.mkdir()
    registry.register(str(other), name=first.id)
    assert registry.get(first.id) == first


def test_unknown_reference_is_not_found(registry: Registry) -> None:
    with pytest.raises(NotFound, match="'nope'"):
        registry.get("nope")
    with pytest.raises(NotFound):
        registry.unregister("nope")


def test_register_and_unregister_publish_events(
    registry: Registry, store: Store, workspace: Path
) -> None:
    resource = registry.register(str(workspace))
    registry.unregister("project")
    rows = store.query("SELECT method, params FROM events ORDER BY id")
    assert [row["method"] for row in rows] == ["resource.changed", "resource.changed"]
    assert '"registered"' in rows[0]["params"] and resource.id in rows[0]["params"]
    assert '"unregistered"' in rows[1]["params"]
    assert registry.resources() == []


def test_what_another_process_registers_or_removes_is_seen_at_once(
    registry: Registry, data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    """The registry keeps what it read; another connection's commit (as
    another process's: the CLI, a server) makes it read again."""
    other = tmp_path / "other"
    other.mkdir()
    mine = registry.register(str(workspace))
    assert registry.get(mine.id) == mine  # read and kept
    elsewhere = Store(data_dir)
    try:
        theirs = Registry(elsewhere, EventLog(elsewhere)).register(str(other))
        assert registry.get(theirs.id) == theirs
        assert [r.name for r in registry.resources()] == ["other", "project"]
        with elsewhere.write() as conn:
            conn.execute("UPDATE resources SET name = 'renamed' WHERE id = ?", (mine.id,))
        assert registry.get(mine.id).name == "renamed"
        Registry(elsewhere, EventLog(elsewhere)).unregister(theirs.id)
        with pytest.raises(NotFound):
            registry.get(theirs.id)
    finally:
        elsewhere.close()


def test_a_lookup_reads_the_database_only_when_it_changed(
    registry: Registry, store: Store, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resource = registry.register(str(workspace))
    registry.get(resource.id)
    queries: list[str] = []
    real_query = store.query
    monkeypatch.setattr(store, "query", lambda sql, *a: queries.append(sql) or real_query(sql, *a))
    for _ in range(3):
        assert registry.get(resource.id) == resource
        assert registry.resources() == [resource]
    assert queries == []
    registry.unregister(resource.id)  # its own write: read again
    assert registry.resources() == []
    assert queries


# --- resolving -------------------------------------------------------------------


def test_resolve_gives_the_logical_path(registry: Registry, workspace: Path) -> None:
    resource = registry.register(str(workspace))
    result = registry.resolve(str(workspace / "src" / "main.py"))
    assert (result.resource, result.logical_path, result.sandbox) == (
        resource,
        "src/main.py",
        False,
    )
    assert registry.resolve(str(workspace)).logical_path == "."
    # Not-yet-existing files (a new buffer) resolve too.
    assert registry.resolve(str(workspace / "new" / "file.py")).logical_path == "new/file.py"


def test_resolve_decodes_file_uris(registry: Registry, tmp_path: Path) -> None:
    spaced = tmp_path / "my project"
    (spaced / "a b").mkdir(parents=True)
    registry.register(str(spaced))
    uri = path_to_uri(str(spaced / "a b" / "ü.py"))
    assert "%20" in uri
    assert registry.resolve(uri).logical_path == "a b/ü.py"


def test_the_deepest_of_nested_roots_wins(registry: Registry, workspace: Path) -> None:
    outer = registry.register(str(workspace))
    inner = registry.register(str(workspace / "src"), name="inner")
    assert registry.resolve(str(workspace / "src" / "main.py")).resource == inner
    assert registry.resolve(str(workspace / "README")).resource == outer
    # Order of registration does not matter: a prefix of the name is not a parent.
    (workspace / "src2").mkdir()
    assert registry.resolve(str(workspace / "src2" / "x")).resource == outer


def test_a_path_under_no_root_is_not_found_never_a_guess(
    registry: Registry, workspace: Path, tmp_path: Path
) -> None:
    registry.register(str(workspace))
    sibling = tmp_path / "work" / "project-old" / "x.py"
    with pytest.raises(NotFound, match="not inside any registered resource") as caught:
        registry.resolve(str(sibling))
    assert caught.value.remedy is not None and "resource add" in caught.value.remedy


def test_dot_dot_cannot_climb_out_of_a_root(registry: Registry, workspace: Path) -> None:
    registry.register(str(workspace))
    with pytest.raises(NotFound):
        registry.resolve(f"{workspace}/src/../../elsewhere/x.py")
    assert registry.resolve(f"{workspace}/src/../src/main.py").logical_path == "src/main.py"


def test_symlinks_resolve_to_where_they_point(
    registry: Registry, workspace: Path, tmp_path: Path
) -> None:
    registry.register(str(workspace))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("")
    (workspace / "escape").symlink_to(outside)  # inside the root, pointing out
    (tmp_path / "shortcut").symlink_to(workspace / "src")  # outside, pointing in
    with pytest.raises(NotFound):
        registry.resolve(str(workspace / "escape" / "secret.txt"))
    assert registry.resolve(str(tmp_path / "shortcut" / "main.py")).logical_path == "src/main.py"


def test_an_unregistered_worktree_inside_a_resource_fails_closed(
    registry: Registry, workspace: Path
) -> None:
    registry.register(str(workspace))
    worktree = make_worktree(workspace / "wt" / "feature")
    for path in (worktree, worktree / "app.py", worktree / "deep" / "new.py"):
        with pytest.raises(NotFound, match="git checkout of its own") as caught:
            registry.resolve(str(path))
        assert caught.value.remedy == f"register the worktree: acp-backend resource add {worktree}"
    # Its sibling directories still belong to the outer resource.
    assert registry.resolve(str(workspace / "wt" / "notes.md")).logical_path == "wt/notes.md"


def test_a_registered_worktree_resolves_to_itself(registry: Registry, workspace: Path) -> None:
    registry.register(str(workspace))
    worktree = make_worktree(workspace / "feature")
    own = registry.register(str(worktree))
    result = registry.resolve(str(worktree / "app.py"))
    assert (result.resource, result.logical_path) == (own, "app.py")


def test_a_nested_git_directory_is_part_of_the_resource(
    registry: Registry, workspace: Path
) -> None:
    """Only a ``.git`` *file* marks a separate checkout; a root's own ``.git``
    directory, or a plain nested clone, is ordinary content."""
    (workspace / ".git").mkdir()
    (workspace / "vendor" / "lib" / ".git").mkdir(parents=True)
    registry.register(str(workspace))
    assert registry.resolve(str(workspace / "vendor" / "lib" / "x.c")).logical_path == (
        "vendor/lib/x.c"
    )


def test_the_registered_root_may_itself_be_a_worktree(registry: Registry, tmp_path: Path) -> None:
    worktree = make_worktree(tmp_path / "feature")
    registry.register(str(worktree))
    assert registry.resolve(str(worktree / "app.py")).logical_path == "app.py"


# --- sandboxes -------------------------------------------------------------------


def test_sandbox_roots_resolve_to_their_resource(
    registry: Registry, store: Store, workspace: Path, tmp_path: Path
) -> None:
    resource = registry.register(str(workspace))
    sandbox = tmp_path / "sandboxes" / "plan-1"
    (sandbox / "src").mkdir(parents=True)
    updated = registry.add_sandbox_root(resource.id, str(sandbox))
    assert updated.sandbox_roots == (str(sandbox),)
    (last,) = store.query("SELECT params FROM events ORDER BY id DESC LIMIT 1")
    change = json.loads(last["params"])
    assert (change["change"], change["resource"]["sandbox_roots"]) == ("updated", [str(sandbox)])
    result = registry.resolve(str(sandbox / "src" / "main.py"))
    assert (result.resource.id, result.logical_path, result.sandbox) == (
        resource.id,
        "src/main.py",
        True,
    )
    with pytest.raises(AlreadyExists, match="sandbox of resource 'project'"):
        registry.register(str(sandbox))
    with pytest.raises(AlreadyExists, match="already registered"):
        registry.add_sandbox_root(resource.id, str(workspace))
    registry.remove_sandbox_root(resource.id, str(sandbox))
    with pytest.raises(NotFound):
        registry.resolve(str(sandbox / "src" / "main.py"))
    with pytest.raises(NotFound, match="not a sandbox"):
        registry.remove_sandbox_root(resource.id, str(sandbox))


# --- pure resolution (any platform's paths) -------------------------------------------


def windows_entries() -> list[RootEntry]:
    now = datetime.now(UTC)
    outer = Resource(
        id="R1",
        name="src",
        root=normalize_path("C:\\Src"),
        created_at=now,
        sandbox_roots=(normalize_path("D:\\sandboxes\\plan"),),
    )
    inner = Resource(id="R2", name="lib", root=normalize_path("c:/Src/Lib"), created_at=now)
    return root_entries([outer, inner])


def never_a_checkout(_: str) -> bool:
    return False


@pytest.mark.parametrize(
    ("path", "resource_id", "logical", "sandbox"),
    [
        ("C:\\Src\\app\\main.py", "R1", "app/main.py", False),
        ("file:///c%3A/Src/app/main.py", "R1", "app/main.py", False),
        ("c:/Src/Lib/util.py", "R2", "util.py", False),
        ("C:\\Src\\Lib\\..\\x.py", "R1", "x.py", False),
        ("d:\\sandboxes\\plan\\app\\main.py", "R1", "app/main.py", True),
    ],
)
def test_windows_paths_resolve_through_the_one_normaliser(
    path: str, resource_id: str, logical: str, sandbox: bool
) -> None:
    result = resolve_path(normalize_path(path), windows_entries(), never_a_checkout)
    assert (result.resource.id, result.logical_path, result.sandbox) == (
        resource_id,
        logical,
        sandbox,
    )


@pytest.mark.parametrize("path", ["C:\\Srcx\\a.py", "E:\\Src\\a.py", "C:\\Src\\..\\a.py"])
def test_windows_paths_outside_every_root_are_not_found(path: str) -> None:
    with pytest.raises(NotFound):
        resolve_path(normalize_path(path), windows_entries(), never_a_checkout)


def test_windows_worktree_detection_uses_the_given_predicate() -> None:
    worktrees = {"c:/Src/wt"}
    with pytest.raises(NotFound, match="c:/Src/wt"):
        resolve_path(normalize_path("C:\\Src\\wt\\a.py"), windows_entries(), worktrees.__contains__)
