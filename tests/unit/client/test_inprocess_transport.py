"""The in-process transport: facade loading by import path, dispatch, events."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from acp_client.client import AcpClient
from acp_client.connect import connect
from acp_client.errors import BackendTimeout, BackendUnreachable, InternalError, NotFound
from acp_client.operations import ResourceListResult
from acp_client.transport.inprocess import InProcessTransport, load_facade

# A facade written to disk so it is loaded exactly like a third-party one.
PLUGGED_FACADE = textwrap.dedent(
    """
    class Facade:
        def __init__(self, data_dir):
            self.data_dir = data_dir
            self.calls = []
            self.closed = False

        async def dispatch(self, method, params):
            self.calls.append((method, params))
            if method == "boom":
                raise RuntimeError("secret internals")
            if method == "missing":
                from acp_client.errors import NotFound
                raise NotFound("no such thing", remedy="look elsewhere")
            if method == "stuck":
                import asyncio
                try:
                    await asyncio.sleep(60)
                except asyncio.CancelledError:
                    self.calls.append(("cancelled", params))
                    raise
            if method == "tool_timeout":
                raise TimeoutError("a tool of its own ran out of time")
            return {"method": method, "params": params, "data_dir": str(self.data_dir)}

        async def subscribe(self, after=None):
            start = 0 if after is None else after
            for event_id in range(start + 1, start + 3):
                yield {"jsonrpc": "2.0", "method": "x", "params": {"event_id": event_id}}

        async def aclose(self):
            self.closed = True

    def make(data_dir):
        return Facade(data_dir)

    not_callable = 42
    """
)


@pytest.fixture
def plugged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "plugged_facade.py").write_text(PLUGGED_FACADE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "plugged_facade", raising=False)
    return "plugged_facade"


async def test_a_facade_is_loaded_by_import_path_and_given_the_data_dir(
    plugged: str, tmp_path: Path
) -> None:
    transport = InProcessTransport.load(f"{plugged}:make", tmp_path / "data")
    result = await transport.call("resource.list", {"a": 1})
    assert result == {
        "method": "resource.list",
        "params": {"a": 1},
        "data_dir": str(tmp_path / "data"),
    }
    assert plugged in transport.description
    await transport.aclose()
    assert transport.facade.closed  # type: ignore[attr-defined]


async def test_domain_errors_pass_through_unchanged(plugged: str, tmp_path: Path) -> None:
    transport = InProcessTransport.load(f"{plugged}:make", tmp_path)
    with pytest.raises(NotFound) as caught:
        await transport.call("missing", {})
    assert caught.value.remedy == "look elsewhere"


async def test_a_facade_crash_becomes_an_internal_error_without_its_message(
    plugged: str, tmp_path: Path
) -> None:
    transport = InProcessTransport.load(f"{plugged}:make", tmp_path)
    with pytest.raises(InternalError) as caught:
        await transport.call("boom", {})
    assert "secret internals" not in str(caught.value)
    assert "boom" in str(caught.value)


async def test_a_stuck_call_times_out_as_over_http_and_is_cancelled_inside(
    plugged: str, tmp_path: Path
) -> None:
    transport = InProcessTransport.load(f"{plugged}:make", tmp_path, read_timeout=0.2)
    with pytest.raises(BackendTimeout, match=r"did not answer stuck within 0.2 s"):
        await transport.call("stuck", {"n": 1})
    assert ("cancelled", {"n": 1}) in transport.facade.calls  # type: ignore[attr-defined]
    # The facade's own TimeoutError is its failure, not the limit.
    with pytest.raises(InternalError):
        await transport.call("tool_timeout", {})


async def test_cancelling_the_caller_cancels_the_call(plugged: str, tmp_path: Path) -> None:
    transport = InProcessTransport.load(f"{plugged}:make", tmp_path)
    call = asyncio.ensure_future(transport.call("stuck", {"n": 2}))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert ("cancelled", {"n": 2}) in transport.facade.calls  # type: ignore[attr-defined]


async def test_local_mode_gives_the_in_process_backend_the_read_timeout(
    plugged: str, tmp_path: Path
) -> None:
    client = await connect("local", data_dir=tmp_path, facade=f"{plugged}:make", read_timeout=0.2)
    assert isinstance(client.transport, InProcessTransport)
    assert client.transport.read_timeout == 0.2


async def test_events_come_from_the_facade_subscription(plugged: str, tmp_path: Path) -> None:
    transport = InProcessTransport.load(f"{plugged}:make", tmp_path)
    ids = [message["params"]["event_id"] async for message in transport.events(after=5)]
    assert ids == [6, 7]
    # A facade whose subscribe knows no partial results: asked for them, it sends whole ones.
    partial = transport.events(after=5, partial=True)
    assert [message["params"]["event_id"] async for message in partial] == [6, 7]


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("no_colon_here", "no_colon_here"),
        (":create", ":create"),
        ("module_only:", "module_only:"),
        ("surely_not_a_module_xyz:create", "surely_not_a_module_xyz"),
        ("plugged_facade:absent", "absent"),
        ("plugged_facade:not_callable", "not_callable"),
    ],
)
def test_a_bad_import_path_is_a_clear_error_naming_it(
    plugged: str, tmp_path: Path, spec: str, named: str
) -> None:
    with pytest.raises(BackendUnreachable) as caught:
        load_facade(spec, tmp_path)
    assert named in str(caught.value)


async def test_the_default_facade_is_the_reference_backend(tmp_path: Path) -> None:
    async with AcpClient(InProcessTransport.load(data_dir=tmp_path)) as client:
        assert await client.resource_list() == ()
        server = await client.initialize()
    assert "resource.list" in server.operations


async def test_the_reference_backend_answers_in_process_with_its_own_objects(
    tmp_path: Path,
) -> None:
    # No dump to JSON types and validation again: a listing of 100,000
    # findings cost ~1 s of the event loop that way.
    (tmp_path / "root").mkdir()
    transport = InProcessTransport.load(data_dir=tmp_path / "data")
    async with AcpClient(transport) as client:
        registered = await client.resource_register(str(tmp_path / "root"))
        raw = await transport.call("resource.list", {})
        assert isinstance(raw, ResourceListResult)
        assert raw.resources == (registered,)
        assert await client.resource_list() == (registered,)
