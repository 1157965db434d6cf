"""``json``: a tool's native JSON, read through the validation's ``mapping``.

``findings`` selects the records: names separated by dots, ``[]`` for each
element of an array, ``[N]`` for one (``[-1]``: the last) (``"[].messages[]"``:
each message of each file of eslint's report). The other selectors are relative to a record;
each leading ``^`` steps up to the enclosing object (``"^filePath"``). A
document that is not one JSON value is read as JSON lines (mypy ``-O json``).
Ends are exclusive; lines are 1-based unless the mapping says
``one_based_lines = false``, columns follow ``one_based_columns``.
Records ``failures`` selects (files the tool could not check) make the
result an error quoting them, after the findings. ``fixes`` selects a
record's fixes (ruff's ``fix``), each read through the ``fix_*`` selectors;
their edits are in the record's file, in the findings' units.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from acp_backend.validation.config import ColumnUnit, JsonMapping
from acp_backend.validation.parsers.sarif import load_json
from acp_backend.validation.raw import (
    OutputError,
    RawEdit,
    RawFinding,
    RawFix,
    RawRegion,
    ToolFailure,
    applicability_from_word,
    clip,
    iter_lines,
    severity_from_word,
)

_TOKEN = re.compile(r"\^|\[\]|\[(-?\d+)\]|[^.\[\]^]+|\.")
_MISSING = object()
_MAX_FAILURES = 5  # failure records quoted in the result's message


def parse_json_map(
    text: str, mapping: JsonMapping, unit: ColumnUnit | None, one_based_columns: bool
) -> Iterator[RawFinding]:
    base = 1 if one_based_columns else 0
    line_base = 1 if mapping.one_based_lines else 0
    # Read twice only when there are failures to look for (JSON lines stream).
    documents = list(_documents(text)) if mapping.failures else _documents(text)
    for record, parents in _records(iter(documents), _tokens(mapping.findings)):
        value = _Getter(record, parents)
        message = _text(value(mapping.fields.get("message")))
        detail = _text(value(mapping.fields.get("detail")))
        if detail:
            message = f"{message}: {detail}" if message else detail
        line = _index(value(mapping.fields.get("line")), line_base)
        end_column = _index(value(mapping.fields.get("end_column")), base)
        end_line = _index(value(mapping.fields.get("end_line")), line_base)
        severity = _text(value(mapping.fields.get("severity")))
        path = _text(value(mapping.fields.get("path"))) or None
        yield RawFinding(
            message=clip(message or "(no message)"),
            path=path,
            line=line,
            column=_index(value(mapping.fields.get("column")), base) or 0,
            end_line=(end_line if end_line is not None else line) if end_column else None,
            end_column=end_column,
            unit=unit or ColumnUnit.CODE_POINTS,
            code=_text(value(mapping.fields.get("code"))) or None,
            severity=severity_from_word(mapping.severities.get(severity, severity)),
            rule_description=_text(value(mapping.fields.get("rule_description"))) or None,
            help_uri=_text(value(mapping.fields.get("help_uri"))) or None,
            fixes=tuple(
                _fixes(record, parents, path, mapping.fix_fields, line_base=line_base, base=base)
            ),
        )
    if isinstance(documents, list):
        _raise_failures(documents, mapping)


def _fixes(
    record: Any,
    parents: list[Any],
    path: str | None,
    fields: Mapping[str, str],
    *,
    line_base: int,
    base: int,
) -> Iterator[RawFix]:
    """The record's fixes (``fixes``, then ``fix_*`` relative to each fix and
    edit); a fix with an edit that names no line is left out whole."""
    if path is None or "fixes" not in fields:
        return
    for fix, _ in _walk(record, _tokens(fields["fixes"]), parents):
        edits = []
        for edit, _ in _walk(fix, _tokens(fields["fix_edits"]), []):
            at = _Getter(edit, [])
            line = _index(at(fields.get("fix_line")), line_base)
            text = at(fields["fix_text"])
            if line is None or not isinstance(text, str):
                break
            column = _index(at(fields.get("fix_column")), base) or 0
            end_line = _index(at(fields.get("fix_end_line")), line_base)
            end_column = _index(at(fields.get("fix_end_column")), base)
            region = RawRegion(
                path,
                line,
                column,
                line if end_line is None else end_line,
                column if end_column is None else end_column,
            )
            edits.append(RawEdit(region, text))
        else:
            if edits:
                of_fix = _Getter(fix, [])
                yield RawFix(
                    _text(of_fix(fields.get("fix_description"))),
                    tuple(edits),
                    applicability_from_word(_text(of_fix(fields.get("fix_applicability")))),
                )


def _raise_failures(documents: list[Any], mapping: JsonMapping) -> None:
    assert mapping.failures is not None
    said = []
    for record, parents in _records(iter(documents), _tokens(mapping.failures)):
        value = _Getter(record, parents)
        words = _text(value(mapping.failure_message)) or _text(record) or "(no reason given)"
        path = _text(value(mapping.failure_path))
        said.append(clip(f"{path}: {words}" if path else words))
    if said:
        shown = said[:_MAX_FAILURES]
        more = f"; and {len(said) - len(shown)} more" if len(said) > len(shown) else ""
        raise ToolFailure(f"the tool could not check everything: {'; '.join(shown)}{more}")


def _documents(text: str) -> Iterator[Any]:
    try:
        yield load_json(text, "JSON")
    except OutputError:
        if not text.strip():
            return
        lines = [line for line in iter_lines(text.removeprefix("\ufeff")) if line.strip()]
        if len(lines) < 2:
            raise
        for line in lines:
            yield load_json(line, "JSON")


@functools.cache
def _tokens(selector: str) -> tuple[str, ...]:
    """A selector split once (a mapping's selectors are read for every record)."""
    tokens = tuple(m[0] for m in _TOKEN.finditer(selector) if m[0] != ".")
    if "".join(tokens) != selector.replace(".", ""):
        raise OutputError(f"mapping selector {selector!r} is not understood")
    return tokens


def _records(documents: Iterator[Any], tokens: tuple[str, ...]) -> Iterator[tuple[Any, list[Any]]]:
    for document in documents:
        yield from _walk(document, tokens, [])


def _walk(
    value: Any, tokens: tuple[str, ...], parents: list[Any]
) -> Iterator[tuple[Any, list[Any]]]:
    if not tokens:
        yield value, parents
        return
    token, rest = tokens[0], tokens[1:]
    if token == "[]":
        for item in value if isinstance(value, list) else ():
            yield from _walk(item, rest, parents)
        return
    child = _step(value, token)
    if child is not _MISSING:
        yield from _walk(child, rest, [*parents, value] if isinstance(value, dict) else parents)


def _step(value: Any, token: str) -> Any:
    if token.startswith("[") and isinstance(value, list):
        index = int(token[1:-1])
        return value[index] if -len(value) <= index < len(value) else _MISSING
    if isinstance(value, dict):
        return value.get(token, _MISSING)
    return _MISSING


class _Getter:
    """Reads selectors relative to one record (``^`` climbs to its parents)."""

    def __init__(self, record: Any, parents: list[Any]) -> None:
        self._record, self._parents = record, parents

    def __call__(self, selector: str | None) -> Any:
        if selector is None:
            return None
        return _reader(selector)(self._record, self._parents)


Reader = Callable[[Any, list[Any]], Any]


@functools.cache
def _reader(selector: str) -> Reader:
    """How to read ``selector`` from a record, worked out once: a mapping's
    selectors are read for every record, and most are plain names."""
    tokens = _tokens(selector)
    ups = 0
    while ups < len(tokens) and tokens[ups] == "^":
        ups += 1
    path = tokens[ups:]
    if ups == 0 and not any(token.startswith("[") for token in path):

        def plain(record: Any, _: list[Any]) -> Any:
            value = record
            for name in path:
                if not isinstance(value, dict):
                    return None
                value = value.get(name)
            return value

        return plain

    def general(record: Any, parents: list[Any]) -> Any:
        value = record if ups == 0 else (parents[-ups] if ups <= len(parents) else _MISSING)
        for token in path:
            value = _step(value, token)
        return None if value is _MISSING else value

    return general


def _text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _index(value: Any, base: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value > 2**40:
        return None
    return max(value - base, 0)
