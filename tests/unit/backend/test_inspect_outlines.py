"""The outline cache: one parse per file content, bounded by the text it holds."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from acp_backend.inspect import service
from acp_backend.inspect.service import InspectedFile, InspectService
from acp_backend.inspect.source import from_text
from acp_client.models import Resource

RESOURCE = Resource(id="R", name="r", root="/r", created_at=datetime(2026, 1, 1, tzinfo=UTC))


async def test_hovering_down_an_unchanged_file_parses_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[str] = []
    real = service._parse

    def counting(text: str, path: str) -> object:
        parsed.append(path)
        return real(text, path)

    monkeypatch.setattr(service, "_parse", counting)
    inspector = InspectService(None)  # type: ignore[arg-type]
    target = InspectedFile(RESOURCE, "m.py", "/r/m.py")
    text = "def f():\n    pass\n\n\ndef g():\n    pass\n"
    for line in (0, 1, 4, 5):
        entity, note = await inspector.entity(target, from_text(text), line)
        assert entity is not None and note is None
    assert parsed == ["m.py"]
    await inspector.entity(target, from_text(text + "# edited\n"), 0)
    assert parsed == ["m.py", "m.py"]


async def test_the_cache_holds_at_most_its_budget_of_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "OUTLINE_BUDGET", 100)
    inspector = InspectService(None)  # type: ignore[arg-type]
    target = InspectedFile(RESOURCE, "m.py", "/r/m.py")
    for n in range(10):
        await inspector.entity(target, from_text(f"x = {n}\n" + "#" * 30 + "\n"), 0)
    assert inspector._held <= 100 and len(inspector._outlines) == 2
    await inspector.entity(target, from_text("#" * 200), 0)  # too big to keep at all
    assert len(inspector._outlines) == 2
