"""``context.inspect``'s answer -> hover text: pure, and the same for every editor.

Sections come in a fixed order: findings (what is wrong here), provenance
(why the line is what it is: the plans, then the commit that last changed
it), the enclosing definition (its signature in a code block of its own
language; in a data file, the key path), the snippets, and last the notes
that qualify them. No section, no hover: an editor then shows
nothing rather than an empty popup. Markdown when the client takes it,
plain text otherwise, with the same words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from lsprotocol.types import MarkupContent, MarkupKind

from acp_client.models import (
    ContextFinding,
    ContextInfo,
    ContextItem,
    ContextPlan,
    Decision,
    Entity,
    EntityKind,
    LineHistory,
    Location,
)
from lsp_server.marks import Severity, severity_for
from lsp_server.remedies import NONE, Remedies

_MARKDOWN_SPECIAL = re.compile(r"([\\*_\[\]<>|~#])")
_SAFE_LINK = re.compile(r"^https?://[^\s<>]+$")
MAX_DECISIONS = 3
SHORT_COMMIT = 8
_FENCE_LANGUAGE = re.compile(r"^[A-Za-z0-9_+#.-]{1,32}$")
_SEVERITY_WORDS = {
    Severity.ERROR: "Error",
    Severity.WARNING: "Warning",
    Severity.INFORMATION: "Info",
    Severity.HINT: "Hint",
}


def at_character(info: ContextInfo, line: int, character: int) -> ContextInfo:
    """A whole line's answer narrowed to one character: the findings whose
    range holds it (those without a place were on that line as a whole), and
    the items, but those about a place on this line that does not hold it
    (a snippet about a finding elsewhere on the line)."""
    findings = tuple(
        here
        for here in info.findings
        if here.finding.location is None or here.finding.location.covers(line, character)
    )
    items = tuple(item for item in info.items if _kept(item.location, line, character))
    return info.model_copy(update={"findings": findings, "items": items, "character": character})


def _kept(where: Location | None, line: int, character: int) -> bool:
    if where is None:
        return True
    last = where.line if where.end_line is None else where.end_line
    return not where.line <= line <= last or where.covers(line, character)


def render(
    info: ContextInfo, markdown: bool, remedies: Sequence[Remedies] = ()
) -> MarkupContent | None:
    """The hover text; ``remedies`` (one per finding, in order; none given:
    nothing offered) say what the code-action menu offers for each."""
    text = _Text(markdown)
    offered = [*remedies, *[NONE] * (len(info.findings) - len(remedies))]
    sections = [
        *(text.finding(here, remedy) for here, remedy in zip(info.findings, offered, strict=True)),
        *(text.plan(here) for here in info.provenance),
        *([text.history(info.history)] if info.history is not None else []),
        *([text.entity(info.entity)] if info.entity is not None else []),
        *(text.item(item) for item in info.items),
    ]
    if not sections:
        return None
    if info.notes:
        sections.append(text.lines(text.emphasis(note) for note in info.notes))
    return MarkupContent(
        kind=MarkupKind.Markdown if markdown else MarkupKind.PlainText,
        value=("\n\n---\n\n" if markdown else "\n\n").join(sections),
    )


def when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


class _Text:
    """The words of each section, in Markdown or plain text."""

    def __init__(self, markdown: bool) -> None:
        self.markdown = markdown

    def finding(self, here: ContextFinding, remedies: Remedies) -> str:
        severity = severity_for(here.mode, here.passed)
        word = _SEVERITY_WORDS.get(severity, "Note") if severity is not None else "Passed"
        about = f" — {self.escape(here.description)}" if here.description else ""
        finding = here.finding
        facts = [f"Found {when(here.found_at)} by run {self.code(here.run_id)}"]
        if here.stale:
            facts.append("the file has changed since, not this line")
        facts += self.remedies(here.validation, remedies)
        lines = [
            f"{self.strong(word)} from {self.strong(here.validation)} ({here.mode}){about}",
            self.escape(finding.message),
        ]
        rule = self.rule(finding.code, finding.rule_description, finding.help_uri)
        if rule:
            lines.append(rule)
        lines.append(" · ".join(facts))
        return self.lines(lines)

    def rule(self, code: str | None, description: str | None, link: str | None) -> str:
        name = code or ("rule documentation" if link else "")
        if not name and not description:
            return ""
        if link and _SAFE_LINK.match(link):
            name = f"[{self.escape(name)}](<{link}>)" if self.markdown else f"{name} <{link}>"
        elif name:
            name = self.code(name)
        return "Rule: " + " ".join(part for part in (name, self.escape(description or "")) if part)

    def plan(self, here: ContextPlan) -> str:
        plan = here.plan
        title = f"“{self.escape(plan.title)}”"
        by = f" by {self.escape(plan.author)}" if plan.author else ""
        if here.applied_at is not None:
            head = f"{self.strong('Applied plan')} {title}{by}, {when(here.applied_at)}"
            if plan.forced:
                head += " (forced past a failed required validation)"
        else:
            head = f"{self.strong('Pending plan')} {title}{by} ({plan.state})"
        lines = [f"{head} · plan {self.code(plan.id)}"]
        lines += [self.decision(decision) for decision in plan.decisions[:MAX_DECISIONS]]
        if len(plan.decisions) > MAX_DECISIONS:
            lines.append(f"and {len(plan.decisions) - MAX_DECISIONS} more decisions")
        return self.lines(lines)

    def decision(self, decision: Decision) -> str:
        why = f" — {self.escape(decision.rationale)}" if decision.rationale else ""
        return (
            f"Decision: {self.escape(decision.question)} → {self.strong(decision.chosen)}"
            f" (confidence {decision.confidence:.0%}){why}"
        )

    def remedies(self, validation: str, remedies: Remedies) -> list[str]:
        """What the menu offers, in the words of its titles."""
        said = []
        if remedies.tool_fixes:
            said.append(f"quick fix: {self.strong(f'Fix with {validation}')}")
        elif remedies.withheld:
            said.append(f"its fix waits for a save (the line changed since {validation} read it)")
        if remedies.proposal:
            said.append(f"{self.strong(f'Propose fix with {validation}')} (as a plan)")
        return said

    def history(self, history: LineHistory) -> str:
        if history.commit is None:
            return f"{self.strong('Not committed yet')}: the line differs from the last commit"
        head = f"{self.strong('Last commit')} {self.code(history.commit[:SHORT_COMMIT])}"
        if history.subject:
            head += f" “{self.escape(history.subject)}”"
        if history.author:
            head += f" by {self.escape(history.author)}"
        if history.authored_at is not None:
            head += f", {when(history.authored_at)}"
        if history.path:
            head += f" (as {self.code(history.path)})"
        return head

    def entity(self, entity: Entity) -> str:
        if entity.kind is EntityKind.KEY or entity.key_path is not None:
            block = f"Key {self.code(entity.key_path or entity.name)}"
        else:
            block = self.block("\n".join([*entity.decorators, entity.signature]), _fence(entity))
        return f"{block}\n\n{self.escape(entity.doc)}" if entity.doc else block

    def item(self, item: ContextItem) -> str:
        title = self.strong(item.title)
        if not item.body:
            return title
        if item.language:
            return f"{title}\n\n{self.block(item.body, item.language)}"
        return self.lines([title, self.escape(item.body)])

    def block(self, code: str, language: str) -> str:
        """Code in a fence (a longer one when the code holds backticks)."""
        if not self.markdown:
            return code
        fence = "`" * max(3, _longest_run(code, "`") + 1)
        tag = language if _FENCE_LANGUAGE.match(language) else ""
        return f"{fence}{tag}\n{code}\n{fence}"

    # --- Markdown or not ---------------------------------------------------

    def lines(self, lines: Iterable[str]) -> str:
        return ("  \n" if self.markdown else "\n").join(lines)

    def strong(self, text: str) -> str:
        return f"**{self.escape(text)}**" if self.markdown else text

    def emphasis(self, text: str) -> str:
        return f"_{self.escape(text)}_" if self.markdown else text

    def code(self, text: str) -> str:
        if not self.markdown:
            return text
        ticks = "`" * (_longest_run(text, "`") + 1)
        pad = " " if text.startswith("`") or text.endswith("`") else ""
        return f"{ticks}{pad}{text}{pad}{ticks}"

    def escape(self, text: str) -> str:
        """Tool text as Markdown: backtick spans stay code (tools mean them so),
        everything else is literal; line breaks are kept."""
        if not self.markdown:
            return text
        parts = text.split("`")
        if len(parts) % 2 == 0:  # unbalanced: nothing is code
            escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", text).replace("`", "\\`")
        else:
            escaped = "`".join(
                part if index % 2 else _MARKDOWN_SPECIAL.sub(r"\\\1", part)
                for index, part in enumerate(parts)
            )
        return escaped.replace("\r\n", "\n").replace("\n", "  \n")


def _fence(entity: Entity) -> str:
    """The entity's language; an older backend said none and meant Python."""
    if entity.language:
        return entity.language
    return "python" if entity.id.startswith("py:") else ""


def _longest_run(text: str, char: str) -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)
