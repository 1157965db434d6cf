"""A real project for the language server's unit tests."""

from __future__ import annotations

from pathlib import Path


def todo_project(root: Path, command: str = "grep -Hn TODO a.txt") -> Path:
    """A real project with one informational validation that finds the
    ``TODO`` on line 2 of ``a.txt``, for tests that run a real check."""
    root.mkdir()
    (root / "acp.toml").write_text(
        '[[validations]]\nname = "todo"\nmode = "informational"\n'
        f'command = ["sh", "-c", "{command}"]\nformat = "pattern"\n'
        "pattern = '^(?P<path>[^:]+):(?P<line>\\d+):(?P<message>.*)$'\n",
        encoding="utf-8",
    )
    (root / "a.txt").write_text("one\nTODO two\n", encoding="utf-8")
    return root
