import pytest

from acp_client.models import ResultOutcome, ValidationMode, ValidationResult
from lsp_server import results as store_module
from lsp_server.marks import Mark
from lsp_server.results import ResultStore
from tests.support.factories import finding, result

A, B = ("R", "a.py"), ("R", "b.py")
TOML = ("R", "acp.toml")


def messages(store: ResultStore, key: tuple[str, str]) -> list[str]:
    return sorted(mark.message for mark in store.marks(key))


def shown(store: ResultStore, key: tuple[str, str]) -> list[ValidationResult]:
    """The results a file shows (what its diagnostics' data lead back to)."""
    return [result for result, _ in store.held(key)]


def test_validations_merge_and_each_replaces_only_its_own() -> None:
    store = ResultStore()
    assert store.apply(
        result("lint", findings=[finding("a.py", message="l1"), finding("b.py", message="l2")])
    ) == {A, B}
    store.apply(result("types", findings=[finding("a.py", message="t1")]))
    assert messages(store, A) == ["l1", "t1"]
    changed = store.apply(result("lint", findings=[finding("a.py", message="l3")], at=5))
    assert changed == {A, B}  # b.py loses lint's old finding
    assert messages(store, A) == ["l3", "t1"] and messages(store, B) == []


def test_required_pass_clears_that_validation() -> None:
    store = ResultStore()
    store.apply(result("lint", findings=[finding("a.py", message="l1")]))
    store.apply(result("types", findings=[finding("a.py", message="t1")]))
    assert store.apply(result("lint", passed=True, at=5)) == {A}
    assert messages(store, A) == ["t1"]


def test_older_run_and_cancelled_and_plan_results_are_ignored() -> None:
    store = ResultStore()
    store.apply(result("lint", findings=[finding("a.py", message="new")], at=10))
    assert store.apply(result("lint", findings=[finding("a.py", message="old")], at=1)) == set()
    assert store.apply(result("lint", passed=True, at=20, outcome=ResultOutcome.CANCELLED)) == set()
    assert store.apply(result("lint", passed=True, at=20, plan_id="P")) == set()
    assert messages(store, A) == ["new"]


def test_versions_change_with_content() -> None:
    store = ResultStore()
    store.apply(result("lint", findings=[finding("a.py")]))
    first = store.version(A)
    store.apply(result("types", mode=ValidationMode.INFORMATIONAL, findings=[finding("b.py")]))
    assert store.version(A) == first
    store.apply(result("lint", passed=True, at=3))
    assert store.version(A) > first
    assert set(store.files()) == {A, B}  # an emptied file is still reported (pull)


def test_replace_drops_validations_the_backend_no_longer_has() -> None:
    store = ResultStore()
    store.apply(result("gone", findings=[finding("a.py", message="g")]))
    kept = result("lint", findings=[finding("b.py", message="l")])
    assert store.replace("R", [kept]) == {A, B}
    assert messages(store, A) == [] and messages(store, B) == ["l"]
    assert store.forget_resource("R") == {B}


def test_clear_file_then_a_new_result_shows_again() -> None:
    store = ResultStore()
    store.apply(result("lint", findings=[finding("a.py"), finding("b.py")]))
    assert store.clear_file(A) and not store.clear_file(A)
    assert store.marks(A) == [] and len(store.marks(B)) == 1
    assert store.apply(result("lint", findings=[finding("a.py")], at=2)) == {A, B}
    assert len(store.marks(A)) == 1 and store.marks(B) == []


def test_replace_keeps_what_arrived_after_the_listing_began() -> None:
    store = ResultStore()
    store.apply(result("old", findings=[finding("a.py", message="o")]))
    since = store.now()
    store.apply(result("fresh", findings=[finding("b.py", message="f")]))  # an event, meanwhile
    store.replace("R", [], since)
    assert messages(store, A) == [] and messages(store, B) == ["f"]


def test_events_replayed_around_a_listing_converge_to_the_newest_result() -> None:
    """After a (re)connect, events since the initialize are replayed while the
    listing is taken; in whatever order the two land, the newest result shows."""
    older = result("lint", findings=[finding("a.py", message="older")], at=1)
    newer = result("lint", findings=[finding("b.py", message="newer")], at=2)
    orders = {
        "replay, then the listing": ([older, newer], [newer]),
        "the listing, then the replay": ([], [newer]),
        "a listing taken before the newer event": ([newer], [older]),
    }
    for order, (replayed_first, listing) in orders.items():
        store = ResultStore()
        since = store.now()
        for event in replayed_first:
            store.apply(event)
        store.replace("R", listing, since)
        for event in (older, newer):  # the replay (again), as it may come after
            store.apply(event)
        assert (messages(store, A), messages(store, B)) == ([], ["newer"]), order


def test_the_acp_toml_error_merges_with_validations_and_is_replaced_or_cleared() -> None:
    store = ResultStore()
    # A validation may be named "acp.toml" too: it is not the file's error.
    store.apply(result("acp.toml", findings=[finding("acp.toml", message="declared")]))
    assert store.set_config_error("R", finding("acp.toml", 3, message="bad")) == {TOML}
    first = store.version(TOML)
    assert store.set_config_error("R", finding("acp.toml", 3, message="bad")) == set()
    assert store.version(TOML) == first  # the same error again: nothing to send
    store.set_config_error("R", finding("acp.toml", 5, message="worse"))
    error = store.config_error(TOML)
    assert error is not None and (error.message, error.location.line) == ("worse", 5)
    assert store.config_error(A) is None and messages(store, TOML) == ["declared"]
    store.replace("R", [])  # a refill that lists no results keeps the file's error
    assert store.config_error(TOML) is not None
    assert store.set_config_error("R", None) == {TOML} and store.config_error(TOML) is None


def test_clear_file_and_forget_resource_drop_the_acp_toml_error() -> None:
    store = ResultStore()
    store.set_config_error("R", finding("acp.toml", message="bad"))
    assert store.clear_file(TOML) and store.config_error(TOML) is None
    store.set_config_error("R", finding("acp.toml", message="bad"))
    assert store.forget_resource("R") == {TOML} and store.config_error(TOML) is None


def test_a_large_result_is_taken_in_without_building_its_marks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """10,000 findings are placed in one pass; marks are built a file at a
    time when that file is sent, so the event loop is never held for all."""
    built: list[int | None] = []
    mark_at = store_module.mark_at

    def counted(found: ValidationResult, index: int | None) -> Mark:
        built.append(index)
        return mark_at(found, index)

    monkeypatch.setattr(store_module, "mark_at", counted)
    store = ResultStore()
    findings = [finding(f"m{n // 10}.py", n % 10, message=f"f{n}") for n in range(10_000)]
    assert len(store.apply(result("emit", findings=findings))) == 1000
    assert built == []
    assert messages(store, ("R", "m7.py")) == [f"f{n}" for n in range(70, 80)]
    assert built == list(range(70, 80))


def test_a_partial_result_changes_only_the_files_its_run_covered() -> None:
    """A save's result (ADR 0017): a.py's findings replaced, b.py keeps its
    own, still leading back to the result they came from."""
    store = ResultStore()
    full = result("lint", findings=[finding("a.py", message="a1"), finding("b.py", message="b1")])
    store.apply(full)
    b_version = store.version(B)
    saved = result("lint", findings=[finding("a.py", 2, message="a2")], at=5)
    assert store.apply_partial(saved, ("a.py",), full.id) == {A}
    assert messages(store, A) == ["a2"] and messages(store, B) == ["b1"]
    assert store.version(B) == b_version  # not sent again
    (b_mark,) = store.marks(B)
    assert b_mark.result is full and b_mark.finding == 1
    assert shown(store, A) == [saved]
    assert shown(store, B) == [full]  # b.py's data leads there
    # The next save continues the partial one; a.py clean now: its marks go.
    clean = result("lint", at=9)
    assert store.apply_partial(clean, ("a.py",), saved.id) == {A}
    assert messages(store, A) == [] and messages(store, B) == ["b1"]
    assert messages(store, TOML) == []  # still failing on b.py: no "passed" note
    assert saved not in shown(store, A) + shown(store, B)  # nothing shows it


def test_a_partial_result_the_store_cannot_continue_asks_for_a_listing() -> None:
    store = ResultStore()
    assert store.apply_partial(result("lint"), ("a.py",), "result-never-seen") is None
    shown = result("lint", findings=[finding("b.py", message="b1")], at=5)
    store.apply(shown)
    assert store.apply_partial(result("lint", at=9), ("a.py",), "another-result") is None
    informational = result("lint", mode=ValidationMode.INFORMATIONAL, at=9)
    assert store.apply_partial(informational, ("a.py",), shown.id) is None  # mode changed
    assert store.apply_partial(result("lint", at=1), ("a.py",), "x") == set()  # superseded
    assert messages(store, B) == ["b1"]


def test_a_partial_result_with_findings_beyond_its_files_replaces_them_there() -> None:
    """A checker run on a.py reports b.py too (mypy follows imports): b.py
    then shows that run's findings once, beside the other validation's."""
    store = ResultStore()
    full = result("types", findings=[finding("a.py", message="a1"), finding("b.py", message="b1")])
    store.apply(full)
    store.apply(result("lint", findings=[finding("b.py", message="lint")]))
    saved = result("types", findings=[finding("a.py", message="a2"), finding("b.py", message="b2")])
    assert store.apply_partial(saved, ("a.py",), full.id) == {A, B}
    assert messages(store, A) == ["a2"] and messages(store, B) == ["b2", "lint"]
    assert full not in shown(store, A) + shown(store, B)  # nothing shows it any more
    assert store.clear_file(B) and messages(store, B) == []
    assert shown(store, A) == [saved]


def test_a_validation_dropped_takes_the_files_of_every_layer_along() -> None:
    """After a save's partial result, a.py shows it and b.py the full one:
    dropping the validation (gone from the listing) empties both."""
    store = ResultStore()
    full = result("lint", findings=[finding("a.py", message="a1"), finding("b.py", message="b1")])
    store.apply(full)
    saved = result("lint", findings=[finding("a.py", message="a2")], at=5)
    assert store.apply_partial(saved, ("a.py",), full.id) == {A}
    assert store.replace("R", ()) == {A, B}
    assert messages(store, A) == messages(store, B) == []
    assert shown(store, A) == [] and store.resource_ids() == set()


def test_a_files_validations_keep_their_order_when_one_reports_again() -> None:
    """A file's diagnostics come in the order its validations were first
    seen, not moved to the end by each new report."""
    store = ResultStore()
    store.apply(result("lint", findings=[finding("a.py", message="l1")]))
    store.apply(result("types", findings=[finding("a.py", message="t1")]))
    store.apply(result("lint", findings=[finding("a.py", message="l2")], at=5))
    assert [mark.message for mark in store.marks(A)] == ["l2", "t1"]
