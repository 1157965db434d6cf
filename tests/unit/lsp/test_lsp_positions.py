import os
from pathlib import Path

import pytest
from lsprotocol.types import PositionEncodingKind as Enc

from lsp_server.positions import DiskText, code_points, column, columns, line_at, split_lines

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


@pytest.mark.parametrize("encoding", [Enc.Utf8, Enc.Utf16, Enc.Utf32])
@pytest.mark.parametrize("line", ["a😀中é\t👋🏽x", "plain ascii", "\ud83d lone", ""])
def test_columns_of_a_one_line_range_are_the_columns_of_its_ends(encoding: Enc, line: str) -> None:
    """Both ends at once (the prefix encoded once) give what ``column`` gives
    each: in order, inverted, and past the line's end."""
    for start in range(len(line) + 3):
        for end in range(len(line) + 3):
            expected = (column(line, start, encoding), column(line, end, encoding))
            assert columns(line, start, end, encoding) == expected


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


def test_a_line_past_the_text_is_unknown() -> None:
    assert line_at(None, 0) is None
    assert line_at(["a"], 1) is None
    assert line_at(["a", "😀x"], 1) == "😀x"


@pytest.mark.parametrize(
    ("line", "expected"),
    [("é = 1", [0, 1, 2, 3, 4, 5, 5]), ("😀é😀", [0, 2, 3, 5, 5]), ("\ud83d\ude00", [0, 1, 2, 2])],
)
def test_utf16_columns_of_bmp_astral_and_lone_surrogates(line: str, expected: list[int]) -> None:
    """The ASCII shortcut must not catch these: a BMP line counts one unit a
    character, an astral one two, a lone surrogate (text decoded with
    ``surrogateescape`` upstream) one."""
    assert [column(line, n, Enc.Utf16) for n in range(len(expected))] == expected


def test_split_lines_only_on_lsp_line_breaks() -> None:
    assert split_lines("a\r\nb\rc\nd\u2028e") == ["a", "b", "c", "d\u2028e"]
    assert split_lines("a\nb\u2028c\x0c\x85d\n") == ["a", "b\u2028c\x0c\x85d", ""]  # no \r


def test_disk_text_rereads_after_change(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("one\n")
    disk = DiskText()
    assert disk.lines(str(path)) == ["one", ""]
    path.write_text("one\ntwo 😀\n")
    assert disk.lines(str(path)) == ["one", "two 😀", ""]
    assert disk.lines(str(tmp_path / "missing.py")) is None


def rewrite_keeping_stamp(path: Path, text: str) -> None:
    """New content, same (mtime, size): only a cached copy still shows the old."""
    before = path.stat()
    path.write_text(text)
    assert path.stat().st_size == before.st_size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_disk_text_is_bounded_by_size(tmp_path: Path) -> None:
    small, other, large = (tmp_path / name for name in ("s.py", "o.py", "l.py"))
    small.write_text("a" * 1000)  # each ~1.2 KB of heap as lines
    other.write_text("b" * 1000)
    large.write_text("c" * 5000)
    disk = DiskText(capacity=3000)  # room for the two small files, not a third
    assert disk.lines(str(small)) == ["a" * 1000] and disk.lines(str(other)) == ["b" * 1000]
    assert disk.lines(str(large)) == ["c" * 5000]  # read, not kept: larger than the cache
    rewrite_keeping_stamp(small, "A" * 1000)
    rewrite_keeping_stamp(other, "B" * 1000)
    assert disk.lines(str(small)) == ["a" * 1000]  # still cached
    assert disk.lines(str(other)) == ["b" * 1000]
    disk.lines(str(small))  # the most recent now: "o.py" goes first
    third = tmp_path / "t.py"
    third.write_text("t" * 1000)
    disk.lines(str(third))
    assert disk.lines(str(other)) == ["B" * 1000]  # evicted, read again


def test_disk_text_of_an_empty_file_a_directory_and_bad_utf8(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "bad.py").write_bytes(b"a\xff\r\nb")
    disk = DiskText()
    assert disk.lines(str(tmp_path / "empty.py")) == [""]
    assert disk.lines(str(tmp_path)) is None
    assert disk.lines(str(tmp_path / "bad.py")) == ["a\ufffd", "b"]
