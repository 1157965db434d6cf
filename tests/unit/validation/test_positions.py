"""Column units to code points, on lines with emoji (two UTF-16 units, four
UTF-8 bytes) and CJK (one UTF-16 unit, three UTF-8 bytes)."""

from __future__ import annotations

import re
import unicodedata

import pytest

from acp_backend.validation.config import ColumnUnit
from acp_backend.validation.positions import SourceText

LINES = [
    'GREETING = "👋 你好"; import os',
    "label = '🌍 世界 🙂'; count = int('三')",
    "plain ascii",
]


def units_before(text: str, index: int, unit: ColumnUnit) -> int:
    prefix = text[:index]
    if unit is ColumnUnit.UTF16:
        return len(prefix.encode("utf-16-le")) // 2
    if unit is ColumnUnit.BYTES:
        return len(prefix.encode("utf-8"))
    if unit is ColumnUnit.DISPLAY:
        cells = 0
        for char in prefix:
            wide = unicodedata.east_asian_width(char) in "WF"
            cells += 8 - cells % 8 if char == "\t" else 2 if wide else 1
        return cells
    return index


@pytest.mark.parametrize("unit", list(ColumnUnit))
def test_every_character_start_converts_back_to_its_code_point(unit: ColumnUnit) -> None:
    source = SourceText("\n".join(LINES).encode("utf-8"))
    for number, text in enumerate(LINES):
        for index in range(len(text) + 1):
            column = units_before(text, index, unit)
            assert source.to_code_points(number, column, unit) == index, (text, index)


def test_a_column_inside_a_character_rounds_down_to_its_start() -> None:
    source = SourceText('x = "👋你"'.encode())
    emoji = 5
    assert source.to_code_points(0, 6, ColumnUnit.UTF16) == emoji  # the low surrogate
    for byte in (6, 7, 8):  # inside the emoji's four bytes
        assert source.to_code_points(0, byte, ColumnUnit.BYTES) == emoji
    assert source.to_code_points(0, 10, ColumnUnit.BYTES) == emoji + 1  # inside 你


@pytest.mark.parametrize("unit", list(ColumnUnit))
def test_a_column_past_the_end_of_the_line_means_its_end(unit: ColumnUnit) -> None:
    source = SourceText("ab👋\nnext".encode())
    assert source.to_code_points(0, 99, unit) == 3


def test_a_line_the_file_does_not_have_keeps_the_reported_column() -> None:
    source = SourceText(b"one line\n")
    assert source.line(5) is None
    assert source.to_code_points(5, 7, ColumnUnit.UTF16) == 7


def test_lines_split_like_an_editor_splits_them() -> None:
    source = SourceText(b"a\r\nb\rc\nd\x0ce\xe2\x80\xa8f")
    assert [source.line(i) for i in range(4)] == ["a", "b", "c", "d\x0ce\u2028f"]
    assert source.to_code_points(3, 4, ColumnUnit.CODE_POINTS) == 4


@pytest.mark.parametrize(
    "data",
    [b"", b"\n", b"\n\n", b"a", b"a\n", b"a\r\n", b"a\r", b"\r\n\r\n", b"a\nb\r\nc\rd\n",
     "é\n😀\r\n\n".encode(), b"x" * 70_000 + b"\ny"],
)  # fmt: skip
def test_each_line_is_the_text_between_its_breaks(data: bytes) -> None:
    """The text is held whole with where lines start (``file_facts`` keeps
    one per file read): a line read back is the one a split gives."""
    source = SourceText(data)
    expected = [raw.decode() for raw in re.split(rb"\r\n|\r|\n", data)]
    assert source.line_count() == len(expected)
    for index in [*range(len(expected)), *reversed(range(len(expected)))]:
        assert source.line(index) == expected[index]
    assert source.line(len(expected)) is None and source.line(-1) is None


def test_a_long_line_is_decoded_once_whatever_the_order_it_is_read_in() -> None:
    """A minified file's findings, sorted by rule, go back and forth between
    its few long lines: each is decoded once, not once a finding."""
    source = SourceText(b"a" * 5000 + b"\n" + b"b" * 5000 + b"\nshort")
    first, second = source.line(0), source.line(1)
    assert source.line(0) is first and source.line(1) is second
    assert source.line(2) == "short" and source.line(0) is first


def test_invalid_utf8_in_the_file_counts_as_one_replaced_character() -> None:
    source = SourceText(b"ab\xffcd")
    assert source.line(0) == "ab\ufffdcd"
    assert source.to_code_points(0, 4, ColumnUnit.BYTES) == 4  # 'd' is byte 4, character 4


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_offsets_count_each_line_break_as_written(newline: bytes) -> None:
    data = newline.join(["aé".encode(), b"bc", "😀d".encode()])
    text = data.decode()
    source = SourceText(data)
    for char_offset in range(len(text) + 1):
        before = text[:char_offset].replace("\r\n", "\n").replace("\r", "\n")
        if "\r\n" in text and text[:char_offset].endswith("\r"):
            continue  # inside a CRLF pair: no place of its own
        line = before.count("\n")
        column = len(before) - (before.rfind("\n") + 1)
        assert source.at_offset(char_offset, ColumnUnit.CODE_POINTS) == (line, column)
    assert source.at_offset(len(text) + 5, ColumnUnit.CODE_POINTS) == (2, 2)
