"""Fixtures of the suites; registered by the plugin only when a suite runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from acp_client.errors import AcpError
from acp_conformance.kit import Kit
from acp_conformance.options import KitOptions
from acp_conformance.plugin import OPTIONS
from acp_conformance.scratch import ScratchUnavailable, prepare, release
from acp_conformance.wire import HttpWire, open_wire


@pytest.fixture(scope="session")
def kit_options(pytestconfig: pytest.Config) -> KitOptions:
    return pytestconfig.stash[OPTIONS]


@pytest.fixture(scope="session")
def kit(kit_options: KitOptions, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    """The backend's wire, initialised, with the scratch resource in place.
    A setup failure is reported once per check, with its reason, and fast."""
    data_dir = kit_options.data_dir or tmp_path_factory.mktemp("acp-data")
    try:
        wire = open_wire(kit_options, data_dir)
    except (AcpError, ValueError) as exc:  # a facade that does not load, a refused URL
        pytest.fail(f"cannot set up the backend: {exc}", pytrace=False)
    runner = asyncio.Runner()
    try:
        try:
            answer = runner.run(wire.call("acp.initialize", {"client_name": "acp-conformance"}))
        except httpx.HTTPError as exc:
            pytest.fail(f"cannot reach {wire.description}: {exc!r}", pytrace=False)
        if "result" not in answer:
            pytest.fail(f"acp.initialize was refused: {answer.get('error')}", pytrace=False)
        served = answer["result"].get("operations") or []
        parent: Path = kit_options.scratch_dir or tmp_path_factory.mktemp("scratch")
        prepared, python = kit_options.resource, kit_options.scratch_python
        try:
            scratch, root = runner.run(prepare(wire, parent, prepared, python))
        except ScratchUnavailable as exc:
            pytest.fail(str(exc), pytrace=False)
        kit = Kit(
            kit_options,
            runner,
            wire,
            data_dir,
            scratch,
            root,
            frozenset(served),
            answer["result"].get("last_event_id") or 0,
        )
        yield kit
        runner.run(release(wire, scratch))
    finally:
        runner.run(wire.aclose())
        runner.close()


@pytest.fixture
def http(kit: Kit) -> HttpWire:
    """The HTTP wire; checks of HTTP-only behaviour skip on an in-process backend."""
    if kit.http is None:
        pytest.skip("an in-process backend has no HTTP endpoint (run with --acp URL)")
    return kit.http
