"""Unified diffs as real ``git diff`` writes them: parsed, applied, rendered back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from acp_backend.plans.diffs import PatchError, apply_hunks, parse_diff, render_diff


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ("git", *args), cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "keep.py").write_text("a = 1\nb = 2\nc = 3\n")
    (tmp_path / "gone.py").write_text("x = 1\n")
    (tmp_path / "old_name.py").write_text("".join(f"line {i}\n" for i in range(20)))
    (tmp_path / "tail.txt").write_text("no newline at the end")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    return tmp_path


def test_git_diff_of_new_deleted_renamed_and_unterminated_files(repo: Path) -> None:
    (repo / "keep.py").write_text("a = 1\nb = 20\nc = 3\n")
    (repo / "gone.py").unlink()
    (repo / "new.py").write_text("fresh = True")  # no trailing newline either
    git(repo, "mv", "old_name.py", "new_name.py")
    renamed = (repo / "new_name.py").read_text().replace("line 3\n", "line three\n")
    (repo / "new_name.py").write_text(renamed)
    (repo / "tail.txt").write_text("no newline at the end, still")
    git(repo, "add", "-A")
    diff = git(repo, "diff", "--cached", "-M")

    patches = {patch.path: patch for patch in parse_diff(diff)}

    assert set(patches) == {"keep.py", "gone.py", "new.py", "new_name.py", "tail.txt"}
    assert patches["gone.py"].new_path is None
    assert patches["new.py"].old_path is None and patches["new.py"].new_mode == "100644"
    assert patches["new_name.py"].old_path == "old_name.py"
    base = "".join(f"line {i}\n" for i in range(20))
    assert apply_hunks("new_name.py", base, patches["new_name.py"].hunks) == renamed
    assert apply_hunks("new.py", "", patches["new.py"].hunks) == "fresh = True"
    assert (
        apply_hunks("tail.txt", "no newline at the end", patches["tail.txt"].hunks)
        == "no newline at the end, still"
    )
    assert apply_hunks("gone.py", "x = 1\n", patches["gone.py"].hunks) == ""


def test_a_pure_rename_and_a_mode_change_have_no_hunks(repo: Path) -> None:
    git(repo, "mv", "gone.py", "moved.py")
    (repo / "keep.py").chmod(0o755)
    git(repo, "add", "-A")
    patches = {patch.path: patch for patch in parse_diff(git(repo, "diff", "--cached", "-M"))}
    assert patches["moved.py"].old_path == "gone.py" and patches["moved.py"].hunks == []
    assert patches["keep.py"].new_mode == "100755"


def test_quoted_paths_are_unquoted(repo: Path) -> None:
    (repo / "café.py").write_text("é = 1\n")
    git(repo, "add", "-A")
    [patch] = parse_diff(git(repo, "diff", "--cached"))
    assert patch.path == "café.py"


def test_a_hunk_that_does_not_match_names_the_file_and_line() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -2,1 +2,1 @@\n-b = 2\n+b = 3\n"
    [patch] = parse_diff(diff)
    with pytest.raises(PatchError, match=r"x.py:2"):
        apply_hunks("x.py", "a = 1\nb = 9\n", patch.hunks)


def test_a_hunk_is_found_at_an_offset() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1,1 +1,1 @@\n-b = 2\n+b = 3\n"
    [patch] = parse_diff(diff)
    assert apply_hunks("x.py", "a = 1\nb = 2\n", patch.hunks) == "a = 1\nb = 3\n"


def test_a_symlink_in_a_diff_is_refused(repo: Path) -> None:
    (repo / "link").symlink_to("keep.py")
    git(repo, "add", "-A")
    with pytest.raises(PatchError, match="symlinks"):
        parse_diff(git(repo, "diff", "--cached"))
    git(repo, "commit", "-qm", "link")
    (repo / "link").unlink()
    (repo / "link").symlink_to("gone.py")  # a link retargeted: only its index line says so
    git(repo, "add", "-A")
    with pytest.raises(PatchError, match="symlinks"):
        parse_diff(git(repo, "diff", "--cached"))


def test_binary_and_truncated_diffs_are_refused(repo: Path) -> None:
    (repo / "blob.bin").write_bytes(b"\0\1\2")
    git(repo, "add", "-A")
    with pytest.raises(PatchError, match="binary"):
        parse_diff(git(repo, "diff", "--cached"))
    with pytest.raises(PatchError, match="truncated"):
        parse_diff("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n")
    with pytest.raises(PatchError, match="no file changes"):
        parse_diff("hello\n")


def test_rendered_diffs_are_accepted_by_git_apply(repo: Path) -> None:
    rendered = render_diff("keep.py", "a = 1\nb = 2\nc = 3\n", "a = 1\nc = 3")
    rendered += render_diff("added.py", None, "new\n")
    rendered += render_diff("gone.py", "x = 1\n", None)
    rendered += render_diff("renamed.py", "line 0\n", "line 0\n", old_path="tail.txt")
    (repo / "tail.txt").write_text("line 0\n")
    subprocess.run(("git", "apply", "-"), cwd=repo, input=rendered, text=True, check=True)
    assert (repo / "keep.py").read_text() == "a = 1\nc = 3"
    assert (repo / "added.py").read_text() == "new\n"
    assert not (repo / "gone.py").exists()
    assert (repo / "renamed.py").exists() and not (repo / "tail.txt").exists()
    # And what we render, we parse back to the same content.
    patches = {patch.path: patch for patch in parse_diff(rendered)}
    assert apply_hunks("keep.py", "a = 1\nb = 2\nc = 3\n", patches["keep.py"].hunks) == (
        "a = 1\nc = 3"
    )
