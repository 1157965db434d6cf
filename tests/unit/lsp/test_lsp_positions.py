from pathlib import Path

import pytest
from lsprotocol.types import PositionEncodingKind as Enc

from lsp_server.positions import DiskText, code_points, column, convert, split_lines

# "x = '😀中' # bad": the emoji is 2 UTF-16 units and 4 UTF-8 bytes, 中 is 1 and 3.
LINE = "x = '😀中' # bad"
HASH_AT = LINE.index("#")  # 9 code points in


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [(Enc.Utf32, 9), (Enc.Utf16, 10), (Enc.Utf8, 14)],
)
def test_column_after_emoji_and_cjk(encoding: Enc, expected: int) -> None:
    assert HASH_AT == 9
    assert column(LINE, HASH_AT, encoding) == expected


@pytest.mark.parametrize(("encoding", "units"), [(Enc.Utf32, 9), (Enc.Utf16, 10), (Enc.Utf8, 14)])
def test_editor_units_back_to_code_points(encoding: Enc, units: int) -> None:
    assert code_points(LINE, units, encoding) == HASH_AT


@pytest.mark.parametrize("encoding", [Enc.Utf8, Enc.Utf16, Enc.Utf32])
def test_code_points_inverts_column_everywhere_on_a_mixed_line(encoding: Enc) -> None:
    line = "a😀中é\t👋🏽x"  # 1, 2 (surrogates), 3, 2-byte, tab, emoji + modifier
    for index in range(len(line) + 1):
        assert code_points(line, column(line, index, encoding), encoding) == index


def test_a_position_inside_a_character_means_that_character() -> None:
    line = "😀x"
    assert code_points(line, 1, Enc.Utf16) == 0  # between the surrogates
    assert [code_points(line, b, Enc.Utf8) for b in range(6)] == [0, 0, 0, 0, 1, 2]


def test_code_points_clamped_to_the_line() -> None:
    assert code_points("中", 99, Enc.Utf8) == 1
    assert code_points("abc", 99, Enc.Utf16) == 3
    assert code_points("😀", 99, Enc.Utf32) == 1


def test_ascii_prefix_is_identity_in_every_encoding() -> None:
    for encoding in (Enc.Utf8, Enc.Utf16, Enc.Utf32):
        assert column("abc 😀", 3, encoding) == 3


def test_column_clamped_to_line_end() -> None:
    assert column("中", 5, Enc.Utf8) == 3


def test_unknown_line_keeps_code_points() -> None:
    assert convert(None, 0, 7, Enc.Utf16) == 7
    assert convert(["a"], 3, 7, Enc.Utf16) == 7
    assert convert(["😀x"], 0, 1, Enc.Utf16) == 2


def test_split_lines_only_on_lsp_line_breaks() -> None:
    assert split_lines("a\r\nb\rc\nd\u2028e") == ["a", "b", "c", "d\u2028e"]


def test_disk_text_rereads_after_change(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("one\n")
    disk = DiskText()
    assert disk.lines(str(path)) == ["one", ""]
    path.write_text("one\ntwo 😀\n")
    assert disk.lines(str(path)) == ["one", "two 😀", ""]
    assert disk.lines(str(tmp_path / "missing.py")) is None
