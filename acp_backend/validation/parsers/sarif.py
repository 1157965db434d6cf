"""``sarif``: SARIF 2.1.0 logs (ruff, semgrep, eslint's formatter, ...).

Regions are 1-based with an exclusive ``endColumn``. The column unit is the
run's ``columnKind`` when stated; when not, the specification says UTF-16
code units but real tools differ, hence ``KNOWN_TOOL_UNITS``. A validation's
``columns`` setting overrides both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from acp_backend.validation.config import ColumnUnit
from acp_backend.validation.raw import OutputError, RawFinding
from acp_client.models import SeverityHint

# Column units of tools that omit columnKind, by tool.driver.name (lower case).
KNOWN_TOOL_UNITS: Mapping[str, ColumnUnit] = {
    "ruff": ColumnUnit.CODE_POINTS,  # checked against ruff 0.17 on lines with emoji
}

_COLUMN_KINDS = {
    "utf16CodeUnits": ColumnUnit.UTF16,
    "unicodeCodePoints": ColumnUnit.CODE_POINTS,
}

_LEVELS = {
    "error": SeverityHint.ERROR,
    "warning": SeverityHint.WARNING,
    "note": SeverityHint.INFO,
    "none": SeverityHint.HINT,
}

# Result kinds that do not describe a problem.
_NOT_A_PROBLEM = frozenset({"pass", "notApplicable"})


def parse_sarif(text: str, override: ColumnUnit | None) -> Iterator[RawFinding]:
    if not text.strip():
        raise OutputError("no SARIF output (stdout was empty)")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OutputError(f"output is not SARIF JSON: {exc}") from None
    runs = document.get("runs") if isinstance(document, dict) else None
    if not isinstance(runs, list):
        raise OutputError("output is not a SARIF log: it has no runs array")
    version = document.get("version")
    if isinstance(version, str) and not version.startswith("2.1"):
        raise OutputError(f"SARIF version {version} is not supported (2.1.0 is)")
    for run in runs:
        if isinstance(run, dict):
            yield from _run_findings(run, override)


def _run_findings(run: dict[str, Any], override: ColumnUnit | None) -> Iterator[RawFinding]:
    driver = _dict(_dict(run.get("tool")).get("driver"))
    tool_name = str(driver.get("name", "")).lower()
    unit = (
        override
        or _COLUMN_KINDS.get(str(run.get("columnKind")))
        or KNOWN_TOOL_UNITS.get(tool_name)
        or ColumnUnit.UTF16
    )
    rules = [_dict(rule) for rule in _list(driver.get("rules"))]
    artifacts = [_dict(artifact) for artifact in _list(run.get("artifacts"))]
    base_uris = _dict(run.get("originalUriBaseIds"))
    for entry in _list(run.get("results")):
        result = _dict(entry)
        if result.get("kind") in _NOT_A_PROBLEM or _is_suppressed(result):
            continue
        rule = _rule_of(result, rules)
        level = result.get("level") or _dict(rule.get("defaultConfiguration")).get("level")
        finding = RawFinding(
            message=_message(result, rule),
            code=_str(result.get("ruleId")) or _str(rule.get("id")),
            severity=_LEVELS.get(str(level or "warning")),
            unit=unit,
            rule_description=_rule_description(rule),
            help_uri=_str(rule.get("helpUri")),
        )
        physical = _dict(_dict(_first(result.get("locations"))).get("physicalLocation"))
        path = _artifact_path(_dict(physical.get("artifactLocation")), artifacts, base_uris)
        yield _located(finding, path, _dict(physical.get("region"))) if path else finding


def _located(finding: RawFinding, path: str, region: dict[str, Any]) -> RawFinding:
    start_line = _positive(region.get("startLine")) or 1
    start_column = _positive(region.get("startColumn")) or 1
    end_column = _positive(region.get("endColumn"))
    end_line = _positive(region.get("endLine")) or start_line
    return replace(
        finding,
        path=path,
        line=start_line - 1,
        column=start_column - 1,
        end_line=end_line - 1 if end_column else None,
        end_column=end_column - 1 if end_column else None,
    )


def _artifact_path(
    location: dict[str, Any], artifacts: list[dict[str, Any]], base_uris: dict[str, Any]
) -> str | None:
    """A ``file:`` URI, or a path relative to the resource root (the tool's
    working directory); None when the result names no artifact."""
    uri = location.get("uri")
    index = location.get("index")
    if not isinstance(uri, str) and isinstance(index, int) and 0 <= index < len(artifacts):
        location = {**_dict(artifacts[index].get("location")), **location}
        uri = location.get("uri")
    if not isinstance(uri, str) or not uri:
        return None
    base = _base_uri(location.get("uriBaseId"), base_uris)
    if base and not urlsplit(uri).scheme:
        uri = urljoin(base if base.endswith("/") else base + "/", uri)
    return uri if urlsplit(uri).scheme else unquote(uri)


def _base_uri(base_id: object, base_uris: dict[str, Any], depth: int = 0) -> str | None:
    """The absolute URI an ``uriBaseId`` stands for (they may chain); None if unknown."""
    if not isinstance(base_id, str) or depth > 8:
        return None
    entry = _dict(base_uris.get(base_id))
    uri = entry.get("uri")
    if not isinstance(uri, str):
        return None
    if urlsplit(uri).scheme:
        return uri
    parent = _base_uri(entry.get("uriBaseId"), base_uris, depth + 1)
    return urljoin(parent if parent.endswith("/") else parent + "/", uri) if parent else None


def _rule_of(result: dict[str, Any], rules: list[dict[str, Any]]) -> dict[str, Any]:
    index = result.get("ruleIndex")
    if isinstance(index, int) and 0 <= index < len(rules):
        return rules[index]
    rule_id = result.get("ruleId")
    return next((rule for rule in rules if rule.get("id") == rule_id), {})


def _rule_description(rule: dict[str, Any]) -> str | None:
    """The rule's ``shortDescription``; its name instead when that is a message
    template (ruff's ``Undefined name `{name}`. {tip}``)."""
    short = _str(_dict(rule.get("shortDescription")).get("text"))
    if short and "{" not in short:
        return short
    return _str(rule.get("name")) or _str(_dict(rule.get("properties")).get("name")) or short


def _message(result: dict[str, Any], rule: dict[str, Any]) -> str:
    message = _dict(result.get("message"))
    text = message.get("text")
    if not isinstance(text, str):  # a message by reference into the rule's strings
        strings = _dict(rule.get("messageStrings"))
        text = _dict(strings.get(str(message.get("id")))).get("text")
    if isinstance(text, str) and text:
        arguments = [str(a) for a in _list(message.get("arguments"))]
        for position, argument in enumerate(arguments):
            text = text.replace(f"{{{position}}}", argument)
        return text
    return str(result.get("ruleId") or "(no message)")


def _is_suppressed(result: dict[str, Any]) -> bool:
    return any(
        _dict(s).get("status", "accepted") == "accepted" for s in _list(result.get("suppressions"))
    )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _first(value: object) -> object:
    items = _list(value)
    return items[0] if items else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
