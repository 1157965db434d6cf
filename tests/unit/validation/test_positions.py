"""Column units to code points, on lines with emoji (two UTF-16 units, four
UTF-8 bytes) and CJK (one UTF-16 unit, three UTF-8 bytes)."""

from __future__ import annotations

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
