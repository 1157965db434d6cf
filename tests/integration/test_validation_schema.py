"""``validation.schema`` and ``suppress`` through both transports: the real
HTTP server on 127.0.0.1 and the in-process facade answer the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import LiveServer

from acp_client.client import AcpClient
from acp_client.errors import NotFound
from acp_client.models import SuppressPlace, SuppressSpec
from acp_client.operations import ValidationSchemaResult
from acp_client.transport.http import HttpTransport
from acp_client.transport.inprocess import InProcessTransport

ACP_TOML = """\
[[validations]]
preset = "ruff"
env = { PATH = "tools" }

[[validations]]
preset = "shellcheck"

[[validations]]
name = "mine"
mode = "informational"
command = ["true"]
suppress = { comment = "-- lint: ignore {codes}", where = "line_above", separator = " " }
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """ruff found only through the validation's own relative PATH (``tools``)."""
    root = tmp_path / "project"
    (root / "tools").mkdir(parents=True)
    fake = root / "tools" / "ruff"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    (root / "acp.toml").write_text(ACP_TOML)
    return root


def check(schema: ValidationSchemaResult, project: Path | None) -> None:
    fields = {field.name: field for field in schema.fields}
    assert fields["mode"].values == ("required", "informational")
    assert fields["suppress"].type == "table"
    assert [f.name for f in fields["suppress"].fields] == [
        "comment",
        "where",
        "separator",
        "code",
        "first",
    ]
    presets = {preset.name: preset for preset in schema.presets}
    assert presets["ruff"].fields["suppress"] == {
        "comment": "# noqa: {codes}",
        "where": "line",
        "separator": ", ",
    }
    if project is not None:  # the resource's own PATH for ruff: tools/, from its root
        assert presets["ruff"].on_path
        assert presets["ruff"].found_at == str(project / "tools" / "ruff")
    assert [unit.name for unit in schema.column_units] == [
        "utf-16",
        "code-points",
        "bytes",
        "display",
    ]


async def test_validation_schema_over_http(live_server: LiveServer, project: Path) -> None:
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as client:
        await client.initialize()
        assert "validation.schema" in (client.server.operations if client.server else ())
        resource = await client.resource_register(str(project))
        check(await client.validation_schema(), None)
        check(await client.validation_schema(resource.name), project)
        with pytest.raises(NotFound):
            await client.validation_schema("no-such-resource")
        raw = await client.transport.call("validation.schema", {"resource": resource.id})
        (listed, *_) = (await client.validation_list(resource.id)).validations
    assert {p["name"]: p["on_path"] for p in raw["presets"]}["ruff"] is True
    assert listed.suppress == SuppressSpec(comment="# noqa: {codes}")


async def test_validation_schema_in_process(tmp_path: Path, project: Path) -> None:
    transport = InProcessTransport.load(data_dir=tmp_path / "data")
    async with AcpClient(transport) as client:
        await client.initialize()
        resource = await client.resource_register(str(project))
        check(await client.validation_schema(resource.id), project)
        listed = {v.name: v for v in (await client.validation_list(resource.id)).validations}
    assert listed["shellcheck"].mode.value == "required"
    assert listed["shellcheck"].suppress == SuppressSpec(
        comment="# shellcheck disable={codes}", where=SuppressPlace.LINE_ABOVE, separator=","
    )
    assert listed["mine"].suppress == SuppressSpec(
        comment="-- lint: ignore {codes}", where=SuppressPlace.LINE_ABOVE, separator=" "
    )
    mine = listed["mine"].suppress
    assert mine is not None and mine.render(["a", "b"]) == "-- lint: ignore a b"


async def test_both_transports_answer_the_same(
    live_server: LiveServer, tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", os.defpath)  # the server thread shares this process's PATH
    async with AcpClient(HttpTransport(live_server.url, token=live_server.token)) as remote:
        over_http = await remote.transport.call("validation.schema", {})
    transport = InProcessTransport.load(data_dir=tmp_path / "local")
    async with AcpClient(transport) as local:
        in_process = await local.validation_schema()
    assert ValidationSchemaResult.model_validate(over_http) == in_process
