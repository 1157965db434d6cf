"""A tool's suppression comment, read and written: pure functions on lines.

A validation's ``suppress`` (``SuppressSpec``) gives the comment as a
template, ``# noqa: {codes}``: the text before ``{codes}`` is the comment's
prefix, the text after its suffix (``]`` in ``# type: ignore[{codes}]``).
A comment already on the line is extended with the code (``# noqa: E501,
F401``), never written twice; a tool that reads the comment on the line
above (``line_above``: eslint, shellcheck...) gets it on a line of its own,
indented like the finding's. Columns are code points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acp_client.models import (
    CODE_PLACEHOLDER,
    CODES_PLACEHOLDER,
    Location,
    SuppressPlace,
    SuppressSpec,
    TextEdit,
)


@dataclass(frozen=True, slots=True)
class Form:
    """A ``SuppressSpec`` taken apart for reading a line."""

    prefix: str  # the comment up to its codes
    suffix: str  # after them: "" or "]"
    code_before: str  # "rule:" for yamllint
    code_after: str
    separator: str
    leader: str  # how the comment starts ("#", "//", "<!--"): where another one starts

    @classmethod
    def of(cls, spec: SuppressSpec) -> Form:
        prefix, _, suffix = spec.comment.partition(CODES_PLACEHOLDER)
        before, _, after = spec.code.partition(CODE_PLACEHOLDER)
        leader = prefix.strip().split(" ", 1)[0] if prefix.strip() else prefix
        return cls(prefix, suffix, before, after, spec.separator, leader)

    def code(self, code: str) -> str:
        return f"{self.code_before}{code}{self.code_after}"

    def parse(self, written: str) -> str:
        """A code as the tool names it, from how it is written in the comment."""
        return written.removeprefix(self.code_before).removesuffix(self.code_after)


@dataclass(frozen=True, slots=True)
class Written:
    """A suppression comment found on a line: where its codes are, and which."""

    start: int  # where the comment starts
    codes_start: int
    codes_end: int  # after the last code (before the suffix, or trailing space)
    codes: tuple[str, ...]


def find(text: str, form: Form, before: int | None = None) -> Written | None:
    """The comment on ``text`` (the last one starting before ``before``)."""
    start = text.rfind(form.prefix, 0, before if before is not None else len(text))
    if start < 0:
        return None
    codes_start = start + len(form.prefix)
    end = text.find(form.suffix, codes_start) if form.suffix else -1
    if end < 0:
        end = len(text)
        if form.leader:  # another comment after it ends its codes
            other = text.find(form.leader, codes_start)
            end = other if other >= 0 else end
    region = text[codes_start:end]
    codes_end = codes_start + len(region.rstrip())
    return Written(start, codes_start, codes_end, tuple(_codes(region, form)))


def _codes(region: str, form: Form) -> list[str]:
    mark = form.separator.strip()
    parts = region.split(mark) if mark else region.split()
    return [form.parse(part.strip()) for part in parts if part.strip()]


def suppression(
    lines: Sequence[str],
    path: str,
    line: int,
    code: str,
    spec: SuppressSpec,
    *,
    newline: str = "\n",
) -> TextEdit | None:
    """The edit that silences ``code`` on ``line`` (None: it already is)."""
    form = Form.of(spec)
    text = lines[line] if line < len(lines) else ""
    if spec.where is SuppressPlace.LINE_ABOVE:
        above = lines[line - 1] if line > 0 else None
        written = find(above, form) if above is not None else None
        if (
            above is not None
            and written is not None
            and above.strip().startswith(form.prefix.strip())
        ):
            return _extend(path, line - 1, written, code, form)
        indent = text[: len(text) - len(text.lstrip())]
        return _insert(path, line, 0, f"{indent}{spec.render([code])}{newline}")
    written = find(text, form)
    if written is not None:
        return _extend(path, line, written, code, form)
    other = _comment_start(text, form.leader)
    if spec.first and other is not None:
        return _insert(path, line, other, f"{spec.render([code])}  ")
    end = len(text.rstrip())
    location = Location(path=path, line=line, character=end, end_line=line, end_character=len(text))
    return TextEdit(location=location, new_text=f"  {spec.render([code])}")


def _extend(path: str, line: int, written: Written, code: str, form: Form) -> TextEdit | None:
    if code in written.codes:
        return None
    joined = form.code(code) if not written.codes else f"{form.separator}{form.code(code)}"
    return _insert(path, line, written.codes_end, joined)


def _insert(path: str, line: int, character: int, text: str) -> TextEdit:
    return TextEdit(location=Location(path=path, line=line, character=character), new_text=text)


def _comment_start(text: str, leader: str) -> int | None:
    """Where a comment starting with ``leader`` begins, outside quotes."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif leader and text.startswith(leader, index):
            return index
    return None


@dataclass(frozen=True, slots=True)
class Typing:
    """The cursor inside a suppression comment's codes."""

    start: int  # where the code being typed starts
    typed: str
    present: tuple[str, ...]  # the codes the comment already has


def typing(text: str, character: int, form: Form) -> Typing | None:
    """Where a code is being typed at ``character`` in ``text``, if the
    cursor is inside the codes of a comment (after its prefix, before its
    suffix)."""
    written = find(text, form, before=character)
    if written is None or character < written.codes_start:
        return None
    if form.suffix and form.suffix in text[written.codes_start : character]:
        return None  # after the comment's end
    typed_from = written.codes_start
    mark = form.separator.strip()
    for index in range(character - 1, written.codes_start - 1, -1):
        if (mark and text[index] == mark) or (not mark and text[index].isspace()):
            typed_from = index + 1
            break
    while typed_from < character and text[typed_from] == " ":
        typed_from += 1
    return Typing(typed_from, text[typed_from:character], written.codes)
