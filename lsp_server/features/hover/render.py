"""``context.inspect``'s answer -> hover text: pure, and the same for every editor.

Sections come in a fixed order: findings (what is wrong here), provenance
(why the line is what it is), the enclosing definition, other context, and
last the notes that qualify them. No section, no hover: an editor then shows
nothing rather than an empty popup. Markdown when the client takes it,
plain text otherwise, with the same words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

from lsprotocol.types import DiagnosticSeverity, MarkupContent, MarkupKind

from acp_client.models import (
    ContextFinding,
    ContextInfo,
    ContextItem,
    ContextPlan,
    Decision,
    Entity,
)
from lsp_server.features.diagnostics.mapping import severity_for

_MARKDOWN_SPECIAL = re.compile(r"([\\*_\[\]<>|~#])")
_SAFE_LINK = re.compile(r"^https?://[^\s<>]+$")
MAX_DECISIONS = 3
_SEVERITY_WORDS = {
    DiagnosticSeverity.Error: "Error",
    DiagnosticSeverity.Warning: "Warning",
    DiagnosticSeverity.Information: "Info",
    DiagnosticSeverity.Hint: "Hint",
}


def at_character(info: ContextInfo, line: int, character: int) -> ContextInfo:
    """A whole line's answer narrowed to one character: the findings whose
    range holds it (those without a place were on that line as a whole)."""
    findings = tuple(
        here
        for here in info.findings
        if here.finding.location is None or here.finding.location.covers(line, character)
    )
    return info.model_copy(update={"findings": findings, "character": character})


def render(info: ContextInfo, markdown: bool) -> MarkupContent | None:
    text = _Text(markdown)
    sections = [
        *(text.finding(here) for here in info.findings),
        *(text.plan(here) for here in info.provenance),
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

    def finding(self, here: ContextFinding) -> str:
        severity = severity_for(here.mode, here.passed)
        word = _SEVERITY_WORDS.get(severity, "Note") if severity is not None else "Passed"
        about = f" — {self.escape(here.description)}" if here.description else ""
        finding = here.finding
        facts = [f"Found {when(here.found_at)} by run {self.code(here.run_id)}"]
        if here.fix_available:
            facts.append("fix available")
        if here.stale:
            facts.append("the file has changed since")
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

    def entity(self, entity: Entity) -> str:
        signature = "\n".join([*entity.decorators, entity.signature])
        if self.markdown:
            fence = "`" * max(3, _longest_run(signature, "`") + 1)
            block = f"{fence}python\n{signature}\n{fence}"
        else:
            block = signature
        return f"{block}\n\n{self.escape(entity.doc)}" if entity.doc else block

    def item(self, item: ContextItem) -> str:
        return self.lines(
            [self.strong(item.title), *([self.escape(item.body)] if item.body else [])]
        )

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


def _longest_run(text: str, char: str) -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)
