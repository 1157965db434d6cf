"""A real facade on a fresh data dir, a resource to change, and helpers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acp_backend.facade import BackendFacade, create_facade


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("import os\nimport sys\n\nprint(sys.argv)\n")
    (root / "src" / "b.py").write_text("x = 1\n")
    return root


@pytest.fixture
async def facade(data_dir: Path, project: Path) -> AsyncIterator[BackendFacade]:
    facade = create_facade(data_dir)
    await facade.dispatch("resource.register", {"path": str(project), "name": "p"})
    yield facade
    await facade.aclose()
