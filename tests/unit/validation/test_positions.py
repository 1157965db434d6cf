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


@pytest.mark.parametrize("unit", list(ColumnUnit))
def test_a_bom_is_in_no_line_and_no_column(unit: ColumnUnit) -> None:
    """Tools count a BOM file's columns as they count the same file's without
    it (ruff, bandit, flake8, mypy --no-native-parser: measured), and the
    contract's line 0 starts after it: a BOM changes no position."""
    text = "\t".join(LINES[:2]) + "\n" + LINES[2]
    with_bom, without = SourceText(b"\xef\xbb\xbf" + text.encode()), SourceText(text.encode())
    assert with_bom.line(0) == without.line(0) and "\ufeff" not in (with_bom.line(0) or "")
    assert with_bom.line_count() == without.line_count() == 2
    for number in range(2):
        line = without.line(number) or ""
        assert with_bom.line_length(number) == len(line)
        for index in range(len(line) + 2):
            column = units_before(line, index, unit)
            expected = without.to_code_points(number, column, unit)
            assert with_bom.to_code_points(number, column, unit) == expected, (number, index)


def test_a_bom_alone_is_an_empty_line() -> None:
    source = SourceText(b"\xef\xbb\xbf")
    assert (source.line_count(), source.line(0)) == (1, "")


@pytest.mark.parametrize(
    ("unit", "offset"), [(ColumnUnit.BYTES, 3 + 4), (ColumnUnit.CODE_POINTS, 3)]
)
def test_a_byte_offset_counts_the_bom_and_a_character_offset_does_not(
    unit: ColumnUnit, offset: int
) -> None:
    """SARIF's byteOffset counts the file's bytes (its binary region covers
    the same bytes as its text region); charOffset counts the text."""
    source = SourceText("\ufeffaé\nbc".encode())
    assert source.at_offset(offset, unit) == (1, 0)
    assert source.at_offset(0, unit) == (0, 0)


@pytest.mark.parametrize("unit", list(ColumnUnit))
def test_a_tool_that_counts_the_bom_is_read_without_it(unit: ColumnUnit) -> None:
    """semgrep and clang count a BOM's 3 bytes in line 1's columns, pyright
    and shellcheck one character (``columns_count_bom``): line 0 only."""
    bom = 3 if unit is ColumnUnit.BYTES else 1
    text = LINES[0] + "\n" + LINES[1]
    source = SourceText(b"\xef\xbb\xbf" + text.encode())
    assert source.has_bom and not SourceText(text.encode()).has_bom
    for index in range(len(LINES[0]) + 1):
        column = units_before(LINES[0], index, unit)
        assert source.to_code_points(0, column + bom, unit, bom_counted=True) == index
    assert source.to_code_points(0, 0, unit, bom_counted=True) == 0  # the BOM itself
    column = units_before(LINES[1], 5, unit)
    assert source.to_code_points(1, column, unit, bom_counted=True) == 5  # not line 1
    plain = SourceText(text.encode())  # no BOM: nothing to take off
    assert plain.to_code_points(0, 4, unit, bom_counted=True) == 4
    offset_unit = ColumnUnit.CODE_POINTS
    assert source.at_offset(1 + 4, offset_unit, bom_counted=True) == (0, 4)
    assert source.at_offset(3 + 4, ColumnUnit.BYTES, bom_counted=True) == (0, 4)
