"""Fixtures for the real-editor tests (helpers live in editor_harness)."""

from __future__ import annotations

from pathlib import Path

import pytest
from editor_harness import DemoProject, make_demo_project


@pytest.fixture
def demo_project(tmp_path: Path) -> DemoProject:
    """A temp copy of examples/demo, registered in a fresh backend data dir."""
    return make_demo_project(tmp_path)
