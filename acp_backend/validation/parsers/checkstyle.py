"""``checkstyle``: the XML report many linters write (eslint ``-f checkstyle``,
hadolint, ktlint...): ``<file name><error line column severity message source/>``.

Lines and columns are 1-based (columns in the validation's ``columns``,
default code points); ``source`` is the rule. Documents that declare a
DTD or entities are refused: a report never needs one, and they are how
XML is made to explode.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from xml.etree import ElementTree

from acp_backend.validation.config import ColumnUnit
from acp_backend.validation.raw import OutputError, RawFinding, clip, severity_from_word

_DECLARATION = re.compile(r"<!(?:DOCTYPE|ENTITY)", re.I)


def parse_checkstyle(text: str, unit: ColumnUnit | None) -> Iterator[RawFinding]:
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise OutputError("no checkstyle output (it was empty)")
    if _DECLARATION.search(text):
        raise OutputError("checkstyle output declares a DTD or entities; refused")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise OutputError(f"output is not checkstyle XML: {exc}") from None
    except RecursionError:
        raise OutputError("output is not usable checkstyle XML: nested too deeply") from None
    if root.tag != "checkstyle":
        raise OutputError(f"output is not checkstyle XML: its root is <{root.tag}>")
    for file in root.iter("file"):
        path = file.get("name") or None
        for error in file.iter("error"):
            line = _number(error.get("line"))
            yield RawFinding(
                message=clip(error.get("message") or "(no message)"),
                path=path,
                line=line - 1 if line else None,
                column=max((_number(error.get("column")) or 1) - 1, 0),
                unit=unit or ColumnUnit.CODE_POINTS,
                code=error.get("source") or None,
                severity=severity_from_word(error.get("severity")),
            )


def _number(text: str | None) -> int | None:
    return int(text) if text and text.isdecimal() and len(text) <= 12 else None
