"""What the backend does not offer is a degraded feature, never an outage (issue 8, item 11)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from acp_client.client import AcpClient
from acp_client.errors import MethodNotFound, TransportError, Unsupported


class ScriptedBackend:
    """A transport whose backend offers ``operations`` and records each call."""

    description = "scripted"

    def __init__(self, operations: tuple[str, ...], *, knows: frozenset[str]) -> None:
        self.operations = operations
        self.knows = knows
        self.calls: list[str] = []

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        self.calls.append(method)
        if method == "acp.initialize":
            return {
                "protocol_version": "1.0",
                "server_name": "scripted",
                "server_version": "0",
                "operations": list(self.operations),
            }
        if method not in self.knows:
            raise MethodNotFound(f"{method} is not implemented by this backend yet")
        return {"resources": []}

    def events(self, after: int | None = None) -> AsyncIterator[dict[str, Any]]:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


async def test_an_operation_the_backend_did_not_list_is_refused_without_a_round_trip() -> None:
    backend = ScriptedBackend(("acp.initialize",), knows=frozenset())
    client = AcpClient(backend)
    await client.initialize()
    assert not client.supports("resource.resolve")
    with pytest.raises(Unsupported) as refused:
        await client.resource_resolve("/x")
    assert not isinstance(refused.value, TransportError)
    assert "resource.resolve" in str(refused.value) and "_cleveragents" not in str(refused.value)
    assert backend.calls == ["acp.initialize"]


async def test_operations_listed_under_a2a_names_are_called_by_those_names() -> None:
    alias = "_cleveragents/registry/resources/list"
    backend = ScriptedBackend(("acp.initialize", alias), knows=frozenset({alias}))
    client = AcpClient(backend)
    await client.initialize()
    assert client.supports("resource.list")
    assert await client.resource_list() == ()
    assert backend.calls == ["acp.initialize", alias]


async def test_not_implemented_is_not_retried_under_the_alias_when_operations_are_listed() -> None:
    backend = ScriptedBackend(("acp.initialize", "resource.list"), knows=frozenset())
    client = AcpClient(backend)
    await client.initialize()
    with pytest.raises(Unsupported, match=r"resource\.list"):
        await client.resource_list()
    assert backend.calls == ["acp.initialize", "resource.list"]


async def test_a_backend_that_lists_nothing_is_tried_under_the_alias_once() -> None:
    alias = "_cleveragents/registry/resources/list"
    backend = ScriptedBackend((), knows=frozenset({alias}))
    client = AcpClient(backend)
    await client.initialize()
    assert await client.resource_list() == ()
    assert await client.resource_list() == ()
    assert backend.calls == ["acp.initialize", "resource.list", alias, alias]
