"""The contract refuses a plan path that leaves its root, whoever sends it
(issue 27, item 11): the same rule as the backend's jail (``acp_client.jail``)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from pydantic import ValidationError

from acp_client.client import AcpClient
from acp_client.errors import ServerFault
from acp_client.jail import why_refused
from acp_client.models import FileChange

REFUSED = {
    "/etc/passwd": "not a relative POSIX path",
    "C:/x.py": "not a relative POSIX path",
    "a\\b.py": "not a relative POSIX path",
    "../x.py": "it climbs out with '..'",
    "src/../../x.py": "it climbs out with '..'",
    ".git/hooks/pre-commit": "it lies in .git",
    "sub/.GIT/config": "it lies in .git",
    "a//b.py": "it is not in normal form",
    "./a.py": "it is not in normal form",
    "": "not a relative POSIX path",
}


@pytest.mark.parametrize(("path", "why"), REFUSED.items())
def test_a_change_path_that_leaves_its_root_is_refused(path: str, why: str) -> None:
    assert why_refused(path) == why
    with pytest.raises(ValidationError, match=re.escape(f"plan target {path!r} refused")):
        FileChange(path=path)
    with pytest.raises(ValidationError, match="refused"):
        FileChange(path="ok.py", old_path=path)


@pytest.mark.parametrize("path", ["a.py", "src/pkg/mod.py", "dir with space/x'y.py", ".github/ci"])
def test_clean_paths_pass(path: str) -> None:
    assert why_refused(path) is None
    assert FileChange(path=path).path == path


class EscapingBackend:
    """A backend whose preview names a file outside the resource."""

    description = "escaping"

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        if method == "acp.initialize":
            return {"protocol_version": "1.0", "server_name": "x", "server_version": "0"}
        change = {"path": "../outside.py", "kind": "modify", "new_text": "pwned\n"}
        return {"plan_id": "P1", "state": "complete", "changes": [change], "plan_hash": "h"}

    def events(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


async def test_the_client_refuses_a_preview_that_names_such_a_path() -> None:
    client = AcpClient(EscapingBackend())
    await client.initialize()
    with pytest.raises(ServerFault, match=r"malformed plan.preview result: .*'\.\./outside\.py'"):
        await client.plan_preview("P1")
