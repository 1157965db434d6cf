"""A plan's results live on its sandbox's files: a scope of their own, so a
file and its sandbox copy each keep their own diagnostics."""

from __future__ import annotations

from datetime import UTC, datetime

from acp_client.models import Resource
from lsp_server.results import ResultStore
from lsp_server.roots import Placement, Roots, sandbox_scope
from tests.support.factories import finding, result

SANDBOX = sandbox_scope("R", "/data/sandboxes/P")


def messages(store: ResultStore, key: tuple[str, str]) -> list[str]:
    return sorted(mark.message for mark in store.marks(key))


def test_a_plans_result_shows_in_its_sandbox_only() -> None:
    store = ResultStore()
    real = result("lint", findings=[finding("a.py", message="real")])
    planned = result("lint", findings=[finding("a.py", message="in the sandbox")], plan_id="P")
    assert store.apply(real) == {("R", "a.py")}
    assert store.apply(planned) == set()  # no scope given: not on the real file
    assert store.apply(planned, SANDBOX) == {(SANDBOX, "a.py")}
    assert store.apply(real, SANDBOX) == set()  # the resource's result is not the sandbox's
    assert messages(store, ("R", "a.py")) == ["real"]
    assert messages(store, (SANDBOX, "a.py")) == ["in the sandbox"]


def test_a_sandbox_that_goes_takes_its_marks_along() -> None:
    store = ResultStore()
    planned = result("lint", findings=[finding("a.py")], plan_id="P")
    store.apply(planned, SANDBOX)
    assert store.replace(SANDBOX, ()) == {(SANDBOX, "a.py")}
    assert store.marks((SANDBOX, "a.py")) == []


def test_a_sandbox_placement_has_its_own_key_and_path() -> None:
    resource = Resource(
        id="R",
        name="app",
        root="/src/app",
        sandbox_roots=("/data/sandboxes/P",),
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    real = Placement(resource, "a.py", sandbox=False)
    copy = Placement(resource, "a.py", sandbox=True, sandbox_root="/data/sandboxes/P")
    assert real.key == ("R", "a.py") and copy.key == (SANDBOX, "a.py")
    roots = Roots()
    roots.remember(resource)
    assert roots.path_of(real.key) == "/src/app/a.py"
    assert roots.path_of(copy.key) == "/data/sandboxes/P/a.py"
