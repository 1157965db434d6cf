"""Hover end to end in Python, JavaScript and Bash, in VS Code's and Neovim
0.11's profiles: a finding with its rule, the enclosing function's signature in
a code block of its language, the snippets, the last commit of the line (a real
git work tree), and a plan that changed a line before the commit that took it."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.models import Finding, Location, Plan, ValidationMode
from tests.support.factories import result
from tests.support.git import committed
from tests.support.lsp_harness import Backend, Session, Starter, project, uri
from tests.support.plans import settled

PROFILES = ["visual-studio-code", "neovim@v0.11"]


@dataclass(frozen=True)
class Case:
    language: str  # the editor's language id
    fence: str
    name: str
    text: str
    finding_line: int
    word: str  # what the finding is about, on its line
    planned_line: int  # a line of the same function the plan rewrites
    old: str
    new: str
    signature: str
    doc: str
    entity: str  # the snippet's title starts so


CASES = {
    "python": Case(
        "python",
        "python",
        "hello.py",
        '"""Greetings."""\n\n\ndef greet(name: str) -> str:\n    """Say hello.\n\n'
        '    In one line.\n    """\n    banner = "hi"\n    return f"{banner} {nmae}"\n',
        9,
        "nmae",
        8,
        'banner = "hi"',
        'banner = "hello"',
        "def greet(name: str) -> str",
        "Say hello.",
        "greet (function), lines 4-10",
    ),
    "javascript": Case(
        "javascript",
        "javascript",
        "cart.js",
        "// Cart helpers.\n\n/** Adds up the prices. */\nfunction total(items) {\n"
        "  // Prices are in cents.\n  let sum = 0;\n  // Count each item once.\n"
        "  for (const item of items) {\n"
        "    // Items without a price are free.\n    sum += item.prise;\n  }\n"
        "  return sum;\n}\n",
        9,
        "prise",
        11,
        "return sum;",
        "return Math.round(sum);",
        "function total(items)",
        "Adds up the prices.",
        "total (function), lines 4-13",
    ),
    "bash": Case(
        "shellscript",
        "bash",
        "deploy.sh",
        '#!/usr/bin/env bash\nset -eu\n\n# Copies the build.\ndeploy() {\n  local target="$1"\n'
        '  local source="build/"\n  # The site lives in /srv.\n  # Say so first.\n'
        '  echo "deploying to $target"\n'
        '  rsync -a "$source" "$target:/srv/site/"\n  echo done\n}\n\ndeploy "$@"\n',
        10,
        "rsync",
        11,
        "echo done",
        'echo "done: $target"',
        "deploy()",
        "Copies the build.",
        "deploy (function), lines 5-13",
    ),
}


def finding_of(case: Case) -> Finding:
    line = case.text.splitlines()[case.finding_line]
    start = line.index(case.word)
    return Finding(
        location=Location(
            path=case.name,
            line=case.finding_line,
            character=start,
            end_line=case.finding_line,
            end_character=start + len(case.word),
        ),
        message=f"Suspicious `{case.word}`",
        code="X100",
        rule_description="suspicious-word",
        help_uri="https://example.test/rules/X100",
    )


async def hover(session: Session, path: Path, line: int, character: int = 0) -> str | None:
    answer = await session.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri(path)),
            position=types.Position(line, character),
        )
    )
    if answer is None:
        return None
    assert isinstance(answer.contents, types.MarkupContent)
    assert answer.contents.kind == types.MarkupKind.Markdown
    return answer.contents.value


async def hover_until(session: Session, path: Path, line: int, wanted: str) -> str:
    deadline = time.monotonic() + 10
    while True:
        shown = await hover(session, path, line)
        if shown is not None and wanted in shown:
            return shown
        assert time.monotonic() < deadline, shown
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("language", list(CASES))
async def test_hover_shows_the_finding_the_function_the_commit_and_the_plan(
    backend: Backend, lsp: Starter, tmp_path: Path, profile: str, language: str
) -> None:
    case = CASES[language]
    root = project(tmp_path / "proj", {case.name: case.text})
    first_commit = committed(root, "Add the code")
    resource = await backend.register(root)
    finding = finding_of(case)
    backend.publish(result("lint", ValidationMode.REQUIRED, False, [finding], resource=resource))
    session = await lsp(profile, [root])
    path = root / case.name
    session.open(path, language=case.language)
    await session.wait_diagnostics(path, lambda shown: len(shown) == 1)

    assert finding.location is not None
    shown = await hover(session, path, case.finding_line, finding.location.character)
    assert shown is not None
    sections = shown.split("\n\n---\n\n")
    assert sections[0].startswith("**Error** from **lint** (required)")
    assert f"Suspicious `{case.word}`" in sections[0]
    assert sections[1] == (
        f"**Last commit** `{first_commit[:8]}` “Add the code” by Ada Lovelace, 2026-11-30 08:15 UTC"
    )
    assert sections[2] == f"```{case.fence}\n{case.signature}\n```\n\n{case.doc}"
    assert sections[3].startswith(f"**{case.entity}") and f"```{case.fence}\n" in sections[3]
    assert len(sections) == 4  # the rule shows once, in the finding's section

    # A plan rewrites another line of the function; the editor reloads the file.
    fixed = case.text.replace(case.old, case.new)
    raw = await backend.facade.dispatch(
        "plan.create",
        {
            "resource": resource.id,
            "title": "Tidy the function",
            "author": "fixer",
            "files": [{"path": case.name, "new_text": fixed}],
        },
    )
    plan = await settled(backend.facade, Plan.model_validate(raw).id)
    preview = await backend.facade.dispatch("plan.preview", {"plan_id": plan.id})
    await backend.facade.dispatch(
        "plan.apply", {"plan_id": plan.id, "expected_hash": preview["plan_hash"]}
    )
    session.change(path, fixed, version=2)
    shown = await hover_until(session, path, case.planned_line, "Applied plan")
    sections = shown.split("\n\n---\n\n")
    assert sections[0].startswith("**Applied plan** “Tidy the function” by fixer")
    assert sections[1] == "**Not committed yet**: the line differs from the last commit"
    assert sections[2].startswith(f"```{case.fence}\n{case.signature}\n```")

    # Committed: the plan still comes first, then the commit that took its line.
    second_commit = committed(root, "Take the tidy-up")
    session.change(path, fixed, version=3)  # the editor's next version asks again
    shown = await hover_until(session, path, case.planned_line, second_commit[:8])
    sections = shown.split("\n\n---\n\n")
    assert sections[0].startswith("**Applied plan** “Tidy the function”")
    assert sections[1].startswith(f"**Last commit** `{second_commit[:8]}` “Take the tidy-up”")
