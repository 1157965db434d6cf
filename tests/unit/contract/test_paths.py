from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_client.paths import (
    NotAFilePath,
    default_data_dir,
    is_within,
    normalize_path,
    path_to_uri,
    real_path,
    relative_to,
)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("/src/app/../lib/./x.py", "/src/lib/x.py"),
        ("file:///src/a%20b/c.py", "/src/a b/c.py"),
        ("file://localhost/src/x.py", "/src/x.py"),
        ("file:///src/%E2%9C%93.py", "/src/\u2713.py"),
        ("C:\\Users\\Dev\\proj\\x.py", "c:/Users/Dev/proj/x.py"),
        ("c:/Users/Dev/proj", "c:/Users/Dev/proj"),
        ("file:///C:/Users/Dev/x.py", "c:/Users/Dev/x.py"),
        ("file:///c%3A/Users/Dev/x.py", "c:/Users/Dev/x.py"),
        ("C:\\proj\\..\\other", "c:/other"),
        ("file://server/share/x.py", "//server/share/x.py"),
        ("/trailing/slash/", "/trailing/slash"),
    ],
)
def test_normalize_path(given: str, expected: str) -> None:
    assert normalize_path(given) == expected


@pytest.mark.parametrize(
    "uri", ["untitled:Untitled-1", "vscode-notebook-cell:/x.ipynb#c1", "https://x"]
)
def test_other_schemes_are_not_file_paths(uri: str) -> None:
    with pytest.raises(NotAFilePath):
        normalize_path(uri)


def test_relative_paths_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert normalize_path("a/b") == normalize_path(os.getcwd()) + "/a/b"


def test_uri_round_trip() -> None:
    for path in ["/src/a b/\u00e9\u2713.py", "c:/Users/Dev/x y.py"]:
        assert normalize_path(path_to_uri(path)) == path
    assert path_to_uri("c:/x") == "file:///c%3A/x"


def test_real_path_resolves_symlinks(tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    assert real_path(str(tmp_path / "link" / "f.py")) == f"{os.path.realpath(target)}/f.py"


def test_within_is_by_path_segment() -> None:
    assert is_within("/a/b", "/a")
    assert is_within("/a", "/a")
    assert not is_within("/ab", "/a")
    assert not is_within("/", "/a")
    assert relative_to("/a/b/c.py", "/a") == "b/c.py"
    assert relative_to("/a", "/a") == "."
    with pytest.raises(ValueError):
        relative_to("/ab/c", "/a")


def test_default_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ACP_DATA_DIR", str(tmp_path / "d"))
    assert default_data_dir() == tmp_path / "d"
    monkeypatch.delenv("ACP_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "xdg" / "acp-lsp"
