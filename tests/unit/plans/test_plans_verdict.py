"""A plan is constrained when it makes things worse, not when findings remain."""

from __future__ import annotations

from acp_backend.plans.verdict import worse
from acp_client.models import ResultOutcome, ValidationMode, ValidationResult
from tests.support.factories import finding, result

REQ, INFO = ValidationMode.REQUIRED, ValidationMode.INFORMATIONAL


def ruff(*findings: tuple[str, int, str], **more: object) -> ValidationResult:
    made = [finding(path, line, 0, f"{code} message", code=code) for path, line, code in findings]
    return result("ruff", REQ, not made, made, **more)


def test_findings_the_resource_already_had_are_not_the_plans_doing() -> None:
    before = ruff(("a.py", 0, "F401"), ("a.py", 9, "E722"), ("b.py", 3, "F821"))
    after = ruff(("a.py", 8, "E722"), ("b.py", 3, "F821"))  # the import went: lines moved
    assert worse([after], {"ruff": before}) == []


def test_a_finding_the_resource_does_not_have_constrains_and_is_named() -> None:
    before = ruff(("a.py", 9, "E722"))
    after = ruff(("a.py", 8, "E722"), ("a.py", 2, "E501"))
    (reason,) = worse([after], {"ruff": before})
    assert reason == "ruff finds what the resource does not have: a.py:3 E501"


def test_one_more_of_the_same_finding_counts() -> None:
    before = ruff(("a.py", 1, "E501"))
    after = ruff(("a.py", 1, "E501"), ("a.py", 2, "E501"))
    assert worse([after], {"ruff": before}) != []


def test_failing_where_the_resource_passes_constrains_even_without_findings() -> None:
    after = result("check", REQ, False, [], message="exit status 1")
    (reason,) = worse([after], {"check": result("check", REQ, True, [])})
    assert reason == "check passes on the resource, fails here (exit status 1)"


def test_without_a_finished_result_to_compare_a_failure_constrains() -> None:
    after = ruff(("a.py", 1, "E501"))
    assert worse([after], {}) == ["ruff fails in the sandbox: a.py:2 E501"]
    stopped = ruff(("a.py", 1, "E501"), outcome=ResultOutcome.TIMED_OUT)
    assert worse([after], {"ruff": stopped}) != []
    assert worse([stopped], {"ruff": after}) != []


def test_informational_and_passing_validations_never_constrain() -> None:
    noisy = result("style", INFO, False, [finding("a.py", 0, 0, "new")])
    assert worse([noisy, ruff()], {}) == []


def test_many_findings_are_named_five_and_counted() -> None:
    after = ruff(*[("a.py", n, "E501") for n in range(8)])
    (reason,) = worse([after], {"ruff": ruff()})
    assert reason.endswith("a.py:5 E501 and 3 more")
