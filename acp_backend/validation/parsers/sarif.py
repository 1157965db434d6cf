"""``sarif``: SARIF 2.1.0 logs (ruff, bandit, semgrep, eslint's formatter, ...).

Regions are 1-based with an exclusive ``endColumn``; a missing ``endColumn``
means the end of ``endLine`` (the whole line when only ``startLine`` is
given). The column unit is, per run: the validation's ``columns`` for that
tool, else its ``columns``, else the run's ``columnKind``, else the unit the
tool is known to count in (``KNOWN_TOOL_UNITS``: tools that count UTF-8
bytes without saying so), else the specification's UTF-16.

A run that says it failed (``executionSuccessful: false``, or a notification
at level ``error``) makes the validation an error with the tool's words:
eslint reports parse errors, bandit skipped files, only there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from acp_backend.validation.config import ColumnUnit
from acp_backend.validation.raw import (
    OutputError,
    RawEdit,
    RawFinding,
    RawFix,
    RawRegion,
    RawRelated,
    ToolFailure,
    clip,
)
from acp_client.models import SeverityHint

# Column units of tools that omit columnKind, by a word of tool.driver.name
# (lower case), measured on lines with emoji, CJK and tabs.
KNOWN_TOOL_UNITS: Mapping[str, ColumnUnit] = {
    "ruff": ColumnUnit.CODE_POINTS,
    "bandit": ColumnUnit.BYTES,
    "semgrep": ColumnUnit.BYTES,
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

# Result kinds that are not a problem to report (SARIF 3.27.9).
_NOT_A_PROBLEM = frozenset({"pass", "notApplicable", "informational"})
_PLACEHOLDER = re.compile(r"\[((?:[^\]\\]|\\.)*)\]\((\d+)\)")  # [text](1) -> text
_MAX_NOTES = 5  # failure notifications quoted in the result's message


def parse_sarif(
    text: str,
    override: ColumnUnit | None,
    tool_units: Mapping[str, ColumnUnit] | None = None,
) -> Iterator[RawFinding]:
    document = load_json(text, "SARIF")
    runs = document.get("runs") if isinstance(document, dict) else None
    if not isinstance(runs, list):
        raise OutputError("output is not a SARIF log: it has no runs array")
    version = document.get("version")
    if isinstance(version, str) and not version.startswith("2.1"):
        raise OutputError(f"SARIF version {version} is not supported (2.1.0 is)")
    failures: list[str] = []
    for run in runs:
        if isinstance(run, dict):
            reader = _Run(run, override, tool_units or {})
            yield from reader.findings()
            failures += reader.failures()
    if failures:
        shown = failures[:_MAX_NOTES]
        more = len(failures) - len(shown)
        raise ToolFailure(
            "the tool reported that it did not complete: "
            + "; ".join(shown)
            + (f"; and {more} more" if more else "")
        )


def load_json(text: str, what: str) -> Any:
    """``text`` as JSON (a UTF-8 BOM allowed); ``OutputError`` for anything
    malformed, including nesting too deep or numbers too long to convert."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise OutputError(f"no {what} output (it was empty)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise OutputError(f"output is not {what} JSON: {exc}") from None
    except RecursionError:
        raise OutputError(f"output is not usable {what}: it is nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise OutputError(f"output is not usable {what}: {exc}") from None


class _Run:
    def __init__(
        self, run: dict[str, Any], override: ColumnUnit | None, units: Mapping[str, ColumnUnit]
    ) -> None:
        self._run = run
        driver = _dict(_dict(run.get("tool")).get("driver"))
        name = str(driver.get("name", "")).lower()
        self.unit = (
            units.get(name)
            or override
            or _COLUMN_KINDS.get(str(run.get("columnKind")))
            or next((unit for word, unit in KNOWN_TOOL_UNITS.items() if word in name), None)
            or ColumnUnit.UTF16
        )
        self._rules = [_dict(rule) for rule in _list(driver.get("rules"))]
        self._artifacts = [_dict(artifact) for artifact in _list(run.get("artifacts"))]
        self._base_uris = _dict(run.get("originalUriBaseIds"))

    def failures(self) -> list[str]:
        notes: list[str] = []
        for invocation in map(_dict, _list(self._run.get("invocations"))):
            failed = invocation.get("executionSuccessful") is False
            for key in ("toolExecutionNotifications", "toolConfigurationNotifications"):
                for note in map(_dict, _list(invocation.get(key))):
                    if note.get("level", "warning") == "error":
                        notes.append(self._notification(note))
            if failed and not notes:
                notes.append("executionSuccessful is false")
        return notes

    def _notification(self, note: dict[str, Any]) -> str:
        text = _render(_dict(note.get("message")), {}) or "(no message)"
        region = self._region(_dict(_first(note.get("locations"))))
        if region is None:
            return text
        return f"{region.path}:{region.line + 1}: {text}"

    def findings(self) -> Iterator[RawFinding]:
        for result in map(_dict, _list(self._run.get("results"))):
            kind = result.get("kind", "fail")
            if kind in _NOT_A_PROBLEM or _is_suppressed(result):
                continue
            yield self._finding(result, kind)

    def _finding(self, result: dict[str, Any], kind: object) -> RawFinding:
        rule = self._rule_of(result)
        level = result.get("level")
        if level is None:
            default = _dict(rule.get("defaultConfiguration")).get("level")
            level = (default or "warning") if kind == "fail" else "none"
        locations = [_dict(location) for location in _list(result.get("locations"))]
        region = self._region(locations[0]) if locations else None
        related = [*locations[1:], *map(_dict, _list(result.get("relatedLocations")))]
        related += self._flow_locations(result)
        return RawFinding(
            message=clip(_message(result, rule)),
            code=_str(result.get("ruleId")) or _str(rule.get("id")),
            severity=_LEVELS.get(str(level), SeverityHint.WARNING),
            unit=self.unit,
            path=region.path if region else None,
            line=region.line if region else None,
            region=region,
            related=tuple(self._related(related)),
            fixes=tuple(self._fixes(result)),
            rule_description=_rule_description(rule),
            help_uri=_str(rule.get("helpUri")),
        )

    def _related(self, locations: list[dict[str, Any]]) -> Iterator[RawRelated]:
        for location in locations:
            region = self._region(location)
            if region is not None:
                yield RawRelated(region, clip(_render(_dict(location.get("message")), {})))

    def _flow_locations(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        """Each step of each thread of each code flow, as a plain location."""
        steps = []
        for flow in map(_dict, _list(result.get("codeFlows"))):
            for thread in map(_dict, _list(flow.get("threadFlows"))):
                steps += [
                    _dict(_dict(step).get("location")) for step in _list(thread.get("locations"))
                ]
        return steps

    def _fixes(self, result: dict[str, Any]) -> Iterator[RawFix]:
        for fix in map(_dict, _list(result.get("fixes"))):
            edits = []
            for change in map(_dict, _list(fix.get("artifactChanges"))):
                path = self._artifact_path(_dict(change.get("artifactLocation")))
                if path is None:
                    continue
                for replacement in map(_dict, _list(change.get("replacements"))):
                    region = _region_of(path, _dict(replacement.get("deletedRegion")))
                    inserted = _dict(replacement.get("insertedContent")).get("text", "")
                    if region is not None and isinstance(inserted, str):
                        edits.append(RawEdit(region, inserted))
            if edits:
                yield RawFix(_text(fix.get("description")) or "", tuple(edits))

    def _region(self, location: dict[str, Any]) -> RawRegion | None:
        physical = _dict(location.get("physicalLocation"))
        path = self._artifact_path(_dict(physical.get("artifactLocation")))
        if path is None:
            return None
        return _region_of(path, _dict(physical.get("region"))) or RawRegion(path, line=0)

    def _rule_of(self, result: dict[str, Any]) -> dict[str, Any]:
        index = _dict(result.get("rule")).get("index", result.get("ruleIndex"))
        if isinstance(index, int) and 0 <= index < len(self._rules):
            return self._rules[index]
        rule_id = result.get("ruleId")
        return next((rule for rule in self._rules if rule.get("id") == rule_id), {})

    def _artifact_path(self, location: dict[str, Any]) -> str | None:
        """A ``file:`` URI, or a decoded path relative to the working
        directory; None when the location names no artifact."""
        uri = location.get("uri")
        index = location.get("index")
        if (
            not isinstance(uri, str)
            and isinstance(index, int)
            and 0 <= index < len(self._artifacts)
        ):
            location = {**_dict(self._artifacts[index].get("location")), **location}
            uri = location.get("uri")
        if not isinstance(uri, str) or not uri:
            return None
        base = _base_uri(location.get("uriBaseId"), self._base_uris)
        if base and not urlsplit(uri).scheme:
            uri = urljoin(base if base.endswith("/") else base + "/", uri)
        # SARIF's uri is a URI reference: a relative one is percent-encoded too.
        return uri if urlsplit(uri).scheme else unquote(uri)


def _region_of(path: str, region: dict[str, Any]) -> RawRegion | None:
    """A SARIF region (1-based lines and columns) as a 0-based ``RawRegion``."""
    start_line = _positive(region.get("startLine"))
    if start_line is None:
        for key, in_bytes in (("charOffset", False), ("byteOffset", True)):
            offset = _natural(region.get(key))
            if offset is not None:
                length = _natural(region.get(key.replace("Offset", "Length"))) or 0
                return RawRegion(path, offset=offset, length=length, offset_in_bytes=in_bytes)
        return None
    end_line = _positive(region.get("endLine")) or start_line
    end_column = _positive(region.get("endColumn"))
    return RawRegion(
        path,
        line=start_line - 1,
        column=(_positive(region.get("startColumn")) or 1) - 1,
        end_line=end_line - 1,
        end_column=end_column - 1 if end_column else None,  # None: to the end of end_line
    )


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


def _message(result: dict[str, Any], rule: dict[str, Any]) -> str:
    text = _render(_dict(result.get("message")), _dict(rule.get("messageStrings")))
    return text or str(result.get("ruleId") or "(no message)")


def _render(message: dict[str, Any], strings: dict[str, Any]) -> str:
    """A SARIF message as plain text: by reference into the rule's strings if
    need be, ``{0}`` arguments filled in, ``[text](1)`` links as their text."""
    text = message.get("text")
    if not isinstance(text, str):
        text = _dict(strings.get(str(message.get("id")))).get("text")
    if not isinstance(text, str):
        text = message.get("markdown")
    if not isinstance(text, str) or not text:
        return ""
    arguments = [str(a) for a in _list(message.get("arguments"))]
    if arguments:
        text = re.sub(
            r"\{(\d+)\}",
            lambda m: arguments[int(m[1])] if int(m[1]) < len(arguments) else m[0],
            text,
        )
    return _PLACEHOLDER.sub(lambda m: m[1].replace("\\]", "]").replace("\\[", "["), text)


def _is_suppressed(result: dict[str, Any]) -> bool:
    return any(
        _dict(s).get("status", "accepted") == "accepted" for s in _list(result.get("suppressions"))
    )


def _rule_description(rule: dict[str, Any]) -> str | None:
    """The rule's ``shortDescription``; its name instead when that is a message
    template (ruff's ``Undefined name `{name}`. {tip}``)."""
    short = _text(rule.get("shortDescription"))
    if short and "{" not in short:
        return short
    return _str(rule.get("name")) or _str(_dict(rule.get("properties")).get("name")) or short


def _text(value: object) -> str | None:
    return _str(_dict(value).get("text"))


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


def _natural(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
