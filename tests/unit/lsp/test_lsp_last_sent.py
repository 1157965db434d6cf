from datetime import UTC, datetime

from acp_client.models import Resource
from lsp_server.features.diagnostics.sent import LastSent
from lsp_server.roots import Roots, sandbox_scope

A, B = ("R", "a.py"), ("S", "b.py")
SANDBOXED = (sandbox_scope("R", "/sb/1"), "a.py")


def resource(id: str, root: str) -> Resource:
    return Resource(id=id, name=id, root=root, created_at=datetime.now(UTC))


def sent(*keys: tuple[str, str]) -> tuple[Roots, LastSent[int]]:
    roots = Roots()
    roots.remember(resource("R", "/w/r"))
    roots.remember(resource("S", "/w/s"))
    last: LastSent[int] = LastSent(roots)
    for n, key in enumerate(keys):
        last.put(key, f"file://{roots.path_of(key)}", n, roots.uri_of(key))
    return roots, last


def test_a_file_sent_under_the_uri_roots_spells_holds_none_of_its_own() -> None:
    """What ``get`` is given as the spelling now is what it answers: no URI
    string is held for the file (~9 bytes a finding held)."""
    _, last = sent(A)
    assert last.get(A, "file:///w/r/a.py") == ("file:///w/r/a.py", 0)
    assert last.get(A, "file:///spelt/now") == ("file:///spelt/now", 0)
    assert last.get(B, "file:///w/s/b.py") is None


def test_a_file_sent_under_another_uri_keeps_it() -> None:
    roots, last = sent()
    last.put(A, "file:///editor/a.py", 7, roots.uri_of(A))
    assert last.get(A, roots.uri_of(A)) == ("file:///editor/a.py", 7)


def test_what_roots_will_spell_differently_keeps_the_uri_it_was_sent_under() -> None:
    roots, last = sent(A, B, SANDBOXED)
    roots.note_uri(A, "file:///as/opened/a.py")  # that file only
    assert last.get(A, roots.uri_of(A)) == ("file:///w/r/a.py", 0)
    assert last.get(B, "file:///unchanged") == ("file:///unchanged", 1)
    roots.note_uri(B, f"file://{roots.path_of(B)}")  # the same spelling: nothing to keep
    roots.remember(resource("S", "/w/s"))  # nor for the same root again
    assert last.get(B, "file:///unchanged") == ("file:///unchanged", 1)
    roots.remember(resource("R", "/moved/r"))  # the resource's files, its sandboxes' too
    assert last.get(SANDBOXED, roots.uri_of(SANDBOXED)) == ("file:///sb/1/a.py", 2)
    assert last.get(B, "file:///unchanged") == ("file:///unchanged", 1)
    roots.set_folders(["file:///w"])  # any file
    assert last.get(B, roots.uri_of(B)) == ("file:///w/s/b.py", 1)


def test_a_forgotten_resources_files_keep_their_uris() -> None:
    roots, last = sent(A, B)
    roots.forget("R")
    assert roots.uri_of(A) is None
    assert last.get(A, None) == ("file:///w/r/a.py", 0)
    assert last.get(B, "file:///unchanged") == ("file:///unchanged", 1)
