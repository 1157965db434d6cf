"""``head_start``: the parse server is started early only where this process
will host the backend for certain (ADR 0031)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_client import head_start as module
from acp_client.head_start import BACKEND_FILE, DEFAULT_FACADE, LOCAL, head_start

STARTED: list[str] = []


def record() -> None:
    STARTED.append("started")


@pytest.fixture(autouse=True)
def recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "PARSE_SERVER", f"{__name__}:record")
    STARTED.clear()


def test_local_mode_with_the_default_facade_starts_it(tmp_path: Path) -> None:
    assert head_start(LOCAL, tmp_path, None)
    assert head_start(LOCAL, tmp_path, DEFAULT_FACADE)
    assert STARTED == ["started", "started"]


def test_a_data_dir_a_server_may_serve_is_left_to_discovery(tmp_path: Path) -> None:
    (tmp_path / BACKEND_FILE).write_text("{}", encoding="utf-8")
    assert not head_start(LOCAL, tmp_path, None)
    assert STARTED == []


def test_a_remote_backend_or_another_facade_gets_none(tmp_path: Path) -> None:
    assert not head_start("https://acp.example.com", tmp_path, None)
    assert not head_start(LOCAL, tmp_path, "my_backend:create")
    assert STARTED == []


def test_the_default_data_dir_is_the_one_looked_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_DATA_DIR", str(tmp_path))
    (tmp_path / BACKEND_FILE).write_text("{}", encoding="utf-8")
    assert not head_start(LOCAL, None, None)


def test_no_reference_backend_installed_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(module, "PARSE_SERVER", "no_such_backend.fork_server:warm_up")
    assert not head_start(LOCAL, tmp_path, None)
