"""The hover renderer: sections in order, Markdown or plain text, nothing when empty."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

from lsprotocol.types import MarkupKind

from acp_client.models import (
    ContextFinding,
    ContextInfo,
    ContextItem,
    ContextPlan,
    Decision,
    Entity,
    EntityKind,
    Finding,
    LineHistory,
    Location,
    Plan,
    ValidationMode,
)
from lsp_server.features.hover.render import at_character, render
from lsp_server.remedies import NONE, Remedies

FOUND = datetime(2026, 12, 1, 4, 39, 27, tzinfo=UTC)
NMAE = Finding(
    location=Location(path="g.py", line=4, character=49, end_line=4, end_character=53),
    message="Undefined name `nmae`",
    code="F821",
    rule_description="undefined-name",
    help_uri="https://docs.astral.sh/ruff/rules/undefined-name",
)
GREET = Entity(
    id="py:function/greetings.greet",
    kind=EntityKind.FUNCTION,
    name="greet",
    signature="def greet(name: str) -> str",
    doc="Say hello.",
    location=Location(path="g.py", line=3, character=0, end_line=4, end_character=55),
)


def here(finding: Finding = NMAE, **more: object) -> ContextFinding:
    fields: dict[str, object] = {
        "validation": "ruff",
        "mode": ValidationMode.REQUIRED,
        "description": "Lint with ruff",
        "passed": False,
        "finding": finding,
        "result_id": "R1",
        "run_id": "01RUN",
        "found_at": FOUND,
        **more,
    }
    return ContextFinding.model_validate(fields)


def info(**sections: object) -> ContextInfo:
    return ContextInfo.model_validate({"resource_id": "R", "path": "g.py", "line": 4, **sections})


def test_nothing_to_say_is_no_hover() -> None:
    assert render(info(), markdown=True) is None
    # Notes alone qualify nothing: still no popup.
    assert render(info(notes=("g.py does not parse (line 3)",)), markdown=True) is None


def test_a_finding_with_its_rule_link_time_and_run_in_markdown() -> None:
    content = render(info(findings=(here(),)), markdown=True, remedies=[Remedies(proposal=True)])
    assert content is not None and content.kind is MarkupKind.Markdown
    assert content.value == (
        "**Error** from **ruff** (required) — Lint with ruff  \n"
        "Undefined name `nmae`  \n"
        "Rule: [F821](<https://docs.astral.sh/ruff/rules/undefined-name>) undefined-name  \n"
        "Found 2026-12-01 04:39 UTC by run `01RUN` · **Propose fix with ruff** (as a plan)"
    )


def test_the_fixes_named_are_those_the_menu_offers() -> None:
    def facts(remedies: Remedies) -> str:
        content = render(info(findings=(here(),)), markdown=False, remedies=[remedies])
        assert content is not None
        return content.value.splitlines()[-1].split(" · ", 1)[-1]

    assert facts(Remedies(tool_fixes=1, proposal=True)) == (
        "quick fix: Fix with ruff · Propose fix with ruff (as a plan)"
    )
    assert facts(Remedies(withheld=True)) == (
        "its fix waits for a save (the line changed since ruff read it)"
    )
    assert facts(NONE).startswith("Found ")  # nothing offered, nothing said
    # None given: nothing offered (a finding the editor does not show).
    content = render(info(findings=(here(),)), markdown=False)
    assert content is not None and "fix" not in content.value.lower()


def test_the_same_words_in_plain_text() -> None:
    content = render(info(findings=(here(stale=True),)), markdown=False)
    assert content is not None and content.kind is MarkupKind.PlainText
    assert content.value == (
        "Error from ruff (required) — Lint with ruff\n"
        "Undefined name `nmae`\n"
        "Rule: F821 <https://docs.astral.sh/ruff/rules/undefined-name> undefined-name\n"
        "Found 2026-12-01 04:39 UTC by run 01RUN · the file has changed since, not this line"
    )


def test_severity_words_follow_the_mode_and_outcome() -> None:
    def first_line(**more: object) -> str:
        content = render(info(findings=(here(**more),)), markdown=False)
        assert content is not None
        return content.value.split(" from ")[0]

    assert first_line() == "Error"
    assert first_line(mode=ValidationMode.INFORMATIONAL) == "Warning"
    assert first_line(mode=ValidationMode.INFORMATIONAL, passed=True) == "Hint"
    assert first_line(passed=True) == "Passed"


def test_times_are_shown_in_utc() -> None:
    later = FOUND.astimezone(timezone(timedelta(hours=9)))
    content = render(info(findings=(here(found_at=later),)), markdown=False)
    assert content is not None and "Found 2026-12-01 04:39 UTC" in content.value


def test_rules_without_a_link_or_with_an_unsafe_one_are_not_links() -> None:
    bare = replace(NMAE, help_uri=None, rule_description=None)
    unsafe = replace(NMAE, help_uri="command:workbench.action.quit")
    nameless = Finding(message="m", help_uri="https://example.test/rule")
    nothing = Finding(message="m")
    texts = []
    for finding in (bare, unsafe, nameless, nothing):
        content = render(info(findings=(here(finding),)), markdown=True)
        assert content is not None
        texts.append(content.value.split("  \n"))
    assert texts[0][2] == "Rule: `F821`"
    assert texts[1][2] == "Rule: `F821` undefined-name" and "command:" not in "".join(texts[1])
    assert texts[2][2] == "Rule: [rule documentation](<https://example.test/rule>)"
    assert texts[3][2].startswith("Found")  # no rule line at all


def test_tool_text_is_literal_markdown_but_backtick_spans_stay_code() -> None:
    tricky = Finding(message="use `a*b` not a*b <script> [x](y)\nsecond line", code="X")
    content = render(info(findings=(here(tricky),)), markdown=True)
    assert content is not None
    assert "use `a*b` not a\\*b \\<script\\> \\[x\\](y)  \nsecond line" in content.value
    unbalanced = Finding(message="a ` b_c")
    content = render(info(findings=(here(unbalanced),)), markdown=True)
    assert content is not None and "a \\` b\\_c" in content.value


def test_the_entity_as_a_python_block_with_decorators_and_its_doc() -> None:
    method = GREET.model_copy(update={"decorators": ("@property",), "doc": "Say *hi*."})
    content = render(info(entity=method), markdown=True)
    assert content is not None
    assert content.value == (
        "```python\n@property\ndef greet(name: str) -> str\n```\n\nSay \\*hi\\*."
    )
    content = render(info(entity=GREET.model_copy(update={"doc": ""})), markdown=False)
    assert content is not None and content.value == "def greet(name: str) -> str"


def test_a_signature_with_backticks_gets_a_longer_fence() -> None:
    odd = GREET.model_copy(update={"signature": "def f(x='```')", "doc": ""})
    content = render(info(entity=odd), markdown=True)
    assert content is not None and content.value.startswith("````python\n")


def plan(**more: object) -> Plan:
    fields: dict[str, object] = {
        "id": "01PLAN",
        "resource_id": "R",
        "title": "Explicit start",
        "author": "alice",
        "phase": "apply",
        "state": "applied",
        "created_at": FOUND,
        "updated_at": FOUND,
        "decisions": [
            Decision(
                question="How to sum?",
                chosen="pass start=0",
                rationale="empty lists",
                confidence=0.8,
            )
        ],
        **more,
    }
    return Plan.model_validate(fields)


LINES = Location(path="g.py", line=4, character=0, end_line=5, end_character=0)


def test_an_applied_plan_with_its_author_time_and_decision() -> None:
    applied = ContextPlan(plan=plan(), applied_at=FOUND, location=LINES)
    content = render(info(provenance=(applied,)), markdown=True)
    assert content is not None
    assert content.value == (
        "**Applied plan** “Explicit start” by alice, 2026-12-01 04:39 UTC · plan `01PLAN`  \n"
        "Decision: How to sum? → **pass start=0** (confidence 80%) — empty lists"
    )


def test_a_pending_plan_with_its_state_and_many_decisions_cut_short() -> None:
    many = [Decision(question=f"q{n}", chosen="c") for n in range(5)]
    pending = ContextPlan(plan=plan(state="constrained", author="", decisions=many), location=LINES)
    content = render(info(provenance=(pending,)), markdown=False)
    assert content is not None
    lines = content.value.split("\n")
    assert lines[0] == "Pending plan “Explicit start” (constrained) · plan 01PLAN"
    assert lines[1] == "Decision: q0 → c (confidence 100%)"
    assert lines[-1] == "and 2 more decisions" and len(lines) == 5


def test_a_forced_apply_says_so() -> None:
    forced = ContextPlan(plan=plan(forced=True), applied_at=FOUND, location=LINES)
    content = render(info(provenance=(forced,)), markdown=False)
    assert content is not None and "(forced past a failed required validation)" in content.value


def test_sections_in_a_fixed_order_then_the_notes() -> None:
    content = render(
        info(
            items=(ContextItem(title="Snippet", body="used by the agent"),),
            entity=GREET,
            history=LineHistory(commit="c0ffee" * 6 + "abcd", author="ada", subject="Greet"),
            provenance=(ContextPlan(plan=plan(), applied_at=FOUND, location=LINES),),
            findings=(here(), here(mode=ValidationMode.INFORMATIONAL, validation="todos")),
            notes=("big.py is larger than 2,000,000 bytes: not read",),
        ),
        markdown=True,
    )
    assert content is not None
    sections = content.value.split("\n\n---\n\n")
    assert [section.split("\n")[0][:20] for section in sections] == [
        "**Error** from **ruf",
        "**Warning** from **t",
        "**Applied plan** “Ex",
        "**Last commit** `c0f",
        "```python",
        "**Snippet**  ",
        "_big.py is larger th",
    ]


def test_a_line_s_answer_narrowed_to_a_character() -> None:
    todo = Finding(location=Location(path="g.py", line=4, character=10), message="TODO")
    anchored = Finding(message="no place")
    line = info(findings=(here(), here(todo), here(anchored)), entity=GREET)
    on_word = at_character(line, 4, 50)
    assert [h.finding.message for h in on_word.findings] == [NMAE.message, "TODO", "no place"]
    assert on_word.character == 50 and on_word.entity == GREET
    off_word = at_character(line, 4, 20)
    assert [h.finding.message for h in off_word.findings] == ["TODO", "no place"]
    assert NMAE.message in [h.finding.message for h in at_character(line, 4, 53).findings]
    assert NMAE.message not in [h.finding.message for h in at_character(line, 4, 54).findings]


COMMIT = LineHistory(
    commit="4f1c2b9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c",
    author="Ada Lovelace",
    authored_at=datetime(2026, 11, 30, 9, 15, tzinfo=timezone(timedelta(hours=1))),
    subject="Say *hello* instead",
)


def test_the_line_s_last_commit_after_the_plans() -> None:
    applied = ContextPlan(plan=plan(), applied_at=FOUND, location=LINES)
    content = render(info(provenance=(applied,), history=COMMIT), markdown=True)
    assert content is not None
    plan_section, history = content.value.split("\n\n---\n\n")
    assert plan_section.startswith("**Applied plan**")
    assert history == (
        "**Last commit** `4f1c2b9e` “Say \\*hello\\* instead” by Ada Lovelace, 2026-11-30 08:15 UTC"
    )
    renamed = COMMIT.model_copy(update={"path": "old/g.py", "subject": "", "author": ""})
    content = render(info(history=renamed), markdown=False)
    assert content is not None
    assert content.value == "Last commit 4f1c2b9e, 2026-11-30 08:15 UTC (as old/g.py)"


def test_a_line_not_committed_yet_says_so() -> None:
    content = render(info(history=LineHistory()), markdown=True)
    assert content is not None
    assert content.value == "**Not committed yet**: the line differs from the last commit"


def test_the_signature_is_fenced_in_its_own_language() -> None:
    method = Entity(
        id="rs:method/shapes.rs#Shape::area",
        kind=EntityKind.METHOD,
        name="Shape::area",
        signature="fn area(&self) -> f64",
        doc="The area.",
        location=Location(path="shapes.rs", line=3, character=4, end_line=8, end_character=5),
        language="rust",
    )
    content = render(info(entity=method), markdown=True)
    assert content is not None
    assert content.value == "```rust\nfn area(&self) -> f64\n```\n\nThe area."
    shell = method.model_copy(update={"language": "bash", "signature": "deploy()", "doc": ""})
    content = render(info(entity=shell), markdown=True)
    assert content is not None and content.value == "```bash\ndeploy()\n```"
    # No language said: Python if the id says so (an older backend), else none.
    unsaid = method.model_copy(update={"language": "", "doc": ""})
    content = render(info(entity=unsaid), markdown=True)
    assert content is not None and content.value.startswith("```\n")
    odd = method.model_copy(update={"language": "rust\n```evil", "doc": ""})
    content = render(info(entity=odd), markdown=True)
    assert content is not None and content.value.startswith("```\nfn area")


def test_a_key_path_in_a_data_file() -> None:
    key = Entity(
        id="yaml:key/ci.yaml#jobs.test.steps[2].run",
        kind=EntityKind.KEY,
        name="jobs.test.steps[2].run",
        signature="",
        location=Location(path="ci.yaml", line=15, character=8, end_line=17, end_character=19),
        language="yaml",
        key_path="jobs.test.steps[2].run",
    )
    content = render(info(entity=key), markdown=True)
    assert content is not None and content.value == "Key `jobs.test.steps[2].run`"
    content = render(info(entity=key), markdown=False)
    assert content is not None and content.value == "Key jobs.test.steps[2].run"


def test_snippets_in_code_blocks_of_their_language() -> None:
    first = ContextItem(
        title="greet (function), lines 4-5",
        body="def greet(name: str) -> str:\n    return f'hi {nmae}'",
        language="python",
    )
    others = ContextItem(
        title="2 more F821 findings in this file (ruff)",
        body="9: print(nmae)\n13: x = nmae",
        language="python",
    )
    rule = ContextItem(title="Rule F821 (ruff)", body="undefined-name\nhttps://x.test/F821")
    content = render(info(items=(first, others, rule)), markdown=True)
    assert content is not None
    assert content.value.split("\n\n---\n\n") == [
        "**greet (function), lines 4-5**\n\n"
        "```python\ndef greet(name: str) -> str:\n    return f'hi {nmae}'\n```",
        "**2 more F821 findings in this file (ruff)**\n\n"
        "```python\n9: print(nmae)\n13: x = nmae\n```",
        "**Rule F821 (ruff)**  \nundefined-name  \nhttps://x.test/F821",
    ]
    content = render(info(items=(first,)), markdown=False)
    assert content is not None and content.value == (
        "greet (function), lines 4-5\n\ndef greet(name: str) -> str:\n    return f'hi {nmae}'"
    )
    fenced = first.model_copy(update={"body": "x = '```'"})
    content = render(info(items=(fenced,)), markdown=True)
    assert content is not None and "\n````python\nx = '```'\n````" in content.value


def test_narrowing_to_a_character_drops_the_snippets_about_a_finding_off_it() -> None:
    about_nmae = ContextItem(
        title="Rule F821 (ruff)", body="undefined-name", location=NMAE.location
    )
    first_lines = ContextItem(
        title="greet (function), lines 1-9",
        body="def greet():",
        location=Location(path="g.py", line=0, character=0, end_line=5),
        language="python",
    )
    elsewhere = ContextItem(
        title="2 more F821", location=Location(path="g.py", line=9, character=0)
    )
    line = info(findings=(here(),), items=(about_nmae, first_lines, elsewhere))
    assert at_character(line, 4, 50).items == (about_nmae, first_lines, elsewhere)
    assert at_character(line, 4, 20).items == (first_lines, elsewhere)
