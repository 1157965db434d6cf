"""The conformance table: one row per check, printed and written as JSON and Markdown."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

PASS, FAIL, SKIP = "pass", "fail", "skip"
# "AssertionError: ", "acp_conformance.kit.CallFailed: ", "Failed: ": the reason follows.
# Other exceptions keep their name: it tells a broken answer from a broken kit.
_EXCEPTION_PREFIX = re.compile(r"^(?:[\w.]*\.)?(?:AssertionError|Failed|CallFailed): ")


@dataclass
class Check:
    check: str
    outcome: str
    reason: str


@dataclass
class Report:
    suite: str
    target: str
    checks: list[Check] = field(default_factory=list)
    _described: dict[str, tuple[str, str]] = field(default_factory=dict)

    def describe(self, item: pytest.Item) -> None:
        """Remember an item's check name and what it checks (its docstring)."""
        name = item.name.removeprefix("test_")
        doc = getattr(item, "obj", None).__doc__ if hasattr(item, "obj") else None
        summary = (doc or "").strip().split("\n")[0]
        self._described[item.nodeid] = (name, summary)

    def record(self, report: pytest.TestReport) -> None:
        name, summary = self._described.get(report.nodeid, (report.nodeid, ""))
        if report.when == "call" and report.passed:
            self._add(Check(name, PASS, summary))
        elif report.skipped and report.when in ("setup", "call"):
            self._add(Check(name, SKIP, _skip_reason(report)))
        elif report.failed:
            self._add(Check(name, FAIL, _failure(report)))

    def _add(self, check: Check) -> None:
        # A teardown failure after a pass replaces the pass: the check failed.
        self.checks = [c for c in self.checks if c.check != check.check]
        self.checks.append(check)

    def counts(self) -> dict[str, int]:
        return {kind: sum(c.outcome == kind for c in self.checks) for kind in (PASS, FAIL, SKIP)}

    def as_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "target": self.target,
            "summary": self.counts(),
            "checks": [asdict(c) for c in self.checks],
        }

    def lines(self) -> list[str]:
        width = max((len(c.check) for c in self.checks), default=5)
        rows = [f"{c.outcome.upper():<5} {c.check:<{width}}  {c.reason}" for c in self.checks]
        counts = self.counts()
        total = f"{counts[PASS]} pass, {counts[FAIL]} fail, {counts[SKIP]} skip"
        return [*rows, f"{self.suite} suite against {self.target}: {total}"]

    def markdown(self) -> str:
        counts = self.counts()
        out = [
            f"# ACP conformance: {self.suite} suite",
            "",
            f"Target: `{self.target}`. {counts[PASS]} pass, {counts[FAIL]} fail, "
            f"{counts[SKIP]} skip.",
            "",
            "| check | result | reason |",
            "|---|---|---|",
        ]
        for c in self.checks:
            reason = c.reason.replace("|", "\\|").replace("\n", " ")
            out.append(f"| `{c.check}` | {c.outcome} | {reason} |")
        return "\n".join(out) + "\n"

    def write(self, path: Path) -> list[Path]:
        """``PATH.json`` and ``PATH.md`` (a ``.json``/``.md`` suffix on PATH is dropped)."""
        stem = path.with_suffix("") if path.suffix in (".json", ".md") else path
        stem.parent.mkdir(parents=True, exist_ok=True)
        as_json, as_md = Path(f"{stem}.json"), Path(f"{stem}.md")
        as_json.write_text(json.dumps(self.as_json(), indent=2) + "\n", "utf-8")
        as_md.write_text(self.markdown(), "utf-8")
        return [as_json, as_md]


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _failure(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(getattr(crash, "message", None) or report.longreprtext)
    lines = [line for line in text.splitlines() if line.strip()]
    first = _EXCEPTION_PREFIX.sub("", lines[0] if lines else "failed", count=1)
    if report.when != "call":
        first = f"({report.when}) {first}"
    return first if len(first) <= 400 else first[:397] + "..."
