"""``roots.inside``: the path jail on a result's paths, fast path included."""

from __future__ import annotations

import posixpath

import pytest

from lsp_server.roots import all_inside, inside


def normalised_inside(relative: str) -> bool:
    normal = posixpath.normpath(relative)
    return not relative.startswith("/") and normal != ".." and not normal.startswith("../")


@pytest.mark.parametrize(
    "relative",
    [
        "", ".", "..", "a.py", "pkg/m00001.py", ".github/ci.yml", "pkg/.hidden/x",
        "../x", "a/../../x", "a/../b", "./a", "a/./b", "a//b", "a/..", "a/..b/c",
        "..a/b", "/etc/passwd", "//x", "a\\..\\..\\x", "a/.", "a/...", "...",
    ],
)  # fmt: skip
def test_inside_agrees_with_the_normalised_check(relative: str) -> None:
    assert inside(relative) == normalised_inside(relative)


@pytest.mark.parametrize(
    "relative",
    [
        "", "..", "a.py", ".github/ci.yml", "../x", "a/../../x", "a/../b", "/etc/passwd",
        "//x", "a\n//b", "a\n", "\n/x", "a\n/../../x", "x/\n", "a/...",
    ],
)  # fmt: skip
def test_all_inside_agrees_with_inside_for_each(relative: str) -> None:
    """The one look over a result's paths says "all inside" only when each is."""
    for paths in ([relative], ["ok.py", relative, "pkg/b.py"], [relative, "x\n", "/abs"]):
        assert all_inside(paths) == all(map(inside, paths))


def test_escapes_are_refused() -> None:
    assert not inside("../x") and not inside("a/../../x") and not inside("/abs")
    assert inside("a/../b") and inside(".github/ci.yml")
