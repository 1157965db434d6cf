"""Workspace symbols: fuzzy matching and the backend objects as symbols."""

from __future__ import annotations

from datetime import UTC, datetime

from lsprotocol import types

from acp_client.models import Location, Resource, ResultOutcome, ValidationMode, ValidationSpec
from lsp_server.features.symbols.fuzzy import NameIndex
from lsp_server.features.symbols.index import outcome, resource_symbols
from tests.support.factories import finding, result

DEMO = Resource(id="R", name="demo", root="/work/demo", created_at=datetime(2026, 1, 1, tzinfo=UTC))


def best(names: list[str], query: str, limit: int = 250) -> list[str]:
    index = NameIndex(names)
    return [index.names[i] for i in index.best(query, limit)]


def test_a_subsequence_matches_case_ignored() -> None:
    assert best(["ruff", "RUFF", "mypy", "fr"], "rf") == ["RUFF", "ruff"]


def test_better_matches_first() -> None:
    pool = ["lint-ruff", "ruff", "ruffle-check", "r-u-f-f", "mypy", "run_fast", "ruff-format"]
    assert best(pool, "ruff") == ["ruff", "ruff-format", "ruffle-check", "lint-ruff", "r-u-f-f"]
    # A word start beats the middle of a word; a subsequence that ends sooner wins.
    assert best(["xruffy", "lint-ruff"], "ruff") == ["lint-ruff", "xruffy"]
    assert best(["r----f", "rf"], "rf") == ["rf", "r----f"]


def test_an_empty_query_lists_everything_by_name_up_to_the_limit() -> None:
    assert best(["b", "a", "c"], "", 2) == ["a", "b"]


def test_names_with_line_breaks_or_special_characters() -> None:
    assert best(["fix\nthe typo", "a.b*c"], "the") == ["fix\nthe typo"]
    assert best(["fix\nthe typo", "a.b*c"], "b*") == ["a.b*c"]
    assert best(["Straße"], "strasse") == ["Straße"]


def test_ten_thousand_names_are_matched_and_ranked() -> None:
    pool = [f"validation-{n:05d}" for n in range(10_000)]
    assert best(pool, "v09999", 5) == ["validation-09999"]
    assert len(best(pool, "val")) == 250
    assert best(pool, "validation-00042") == ["validation-00042"]


def test_outcomes_in_a_few_words() -> None:
    assert outcome(None) == "not run yet"
    assert outcome(result(passed=True)) == "passed"
    assert outcome(result(findings=[finding("a.py")])) == "failed (1 finding)"
    assert outcome(result(findings=[finding("a.py"), finding("b.py")])) == "failed (2 findings)"
    assert outcome(result()) == "failed"
    assert outcome(result(outcome=ResultOutcome.TIMED_OUT)) == "timed out"
    assert outcome(result(outcome=ResultOutcome.ERROR)) == "could not run"
    assert outcome(result(outcome=ResultOutcome.CANCELLED)) == "cancelled"


def test_a_resource_and_its_validations_as_symbols() -> None:
    specs = [
        ValidationSpec(
            name="ruff",
            mode=ValidationMode.REQUIRED,
            declared_at=Location(path="acp.toml", line=4, character=0),
        ),
        ValidationSpec(name="todos", mode=ValidationMode.INFORMATIONAL),
    ]
    latest = {"ruff": result("ruff", findings=[finding("a.py")] * 6)}
    symbols = [symbol.to_lsp() for symbol in resource_symbols(DEMO, specs, latest)]
    assert [(s.name, s.kind, s.container_name) for s in symbols] == [
        ("demo", types.SymbolKind.Package, "/work/demo"),
        ("ruff", types.SymbolKind.Event, "demo · required · failed (6 findings)"),
        ("todos", types.SymbolKind.Event, "demo · informational · not run yet"),
    ]
    locations = [s.location for s in symbols]
    assert all(isinstance(loc, types.Location) for loc in locations)
    assert [(loc.uri, loc.range.start.line) for loc in locations] == [  # type: ignore[union-attr]
        ("file:///work/demo/acp.toml", 0),
        ("file:///work/demo/acp.toml", 4),
        ("file:///work/demo/acp.toml", 0),
    ]
