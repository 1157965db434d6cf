"""The kit's command-line options, parsed once into ``KitOptions``."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from acp_client.head_start import DEFAULT_FACADE, LOCAL
from acp_client.transport.http import RPC_PATH

SUITES = ("backend", "server")


@dataclass(frozen=True)
class KitOptions:
    suite: str
    acp: str
    token_file: Path | None
    facade: str
    data_dir: Path | None
    resource: str | None
    scratch_dir: Path | None
    scratch_python: str | None
    server_command: tuple[str, ...]
    report: Path | None
    timeout: float

    @property
    def local(self) -> bool:
        return self.acp == LOCAL

    def server_argv(self, data_dir: Path, acp: str | None = None) -> list[str]:
        """``--server-command`` with ``{acp}`` (``acp`` if given: another
        backend), ``{token_file}``, ``{data_dir}`` and ``{facade}`` filled in."""
        values = {
            "acp": acp or self.acp,  # the base URL: servers append /acp/v1 (some accept it too)
            "token_file": str(self.token_file or ""),
            "data_dir": str(data_dir),
            "facade": self.facade,
        }
        return [part.format(**values) for part in self.server_command]

    @property
    def server_takes_acp(self) -> bool:
        """Whether the server is told its backend by ``{acp}`` (so the kit can
        put another one in front of it)."""
        return any("{acp}" in part for part in self.server_command)


def base_url(url: str) -> str:
    """The server's base URL whether given with or without ``/acp/v1``."""
    url = url.rstrip("/")
    return url.removesuffix(RPC_PATH) if url.endswith(RPC_PATH) else url


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("acp-conformance", "ACP conformance kit (docs/conformance.md)")
    group.addoption("--acp-conformance", choices=SUITES, help="run the backend or server suite")
    group.addoption(
        "--acp",
        default=LOCAL,
        metavar="local|URL",
        help="the backend: a server URL (with or without /acp/v1), or 'local' (in-process)",
    )
    group.addoption("--acp-token-file", type=Path, help="file whose first line is the token")
    group.addoption(
        "--facade",
        default=DEFAULT_FACADE,
        metavar="MODULE:FACTORY",
        help="with --acp local: the backend loaded in this process",
    )
    group.addoption(
        "--acp-data-dir",
        type=Path,
        help="with --acp local: the data dir (default: a fresh temporary one)",
    )
    group.addoption(
        "--acp-resource",
        metavar="NAME",
        help="a prepared scratch resource (`python -m acp_conformance.scratch DIR`), for "
        "backends that do not let the kit register a folder",
    )
    group.addoption(
        "--acp-scratch-dir",
        type=Path,
        metavar="DIR",
        help="where to write the scratch folder the kit registers: a directory the backend "
        "sees at the same path (e.g. a volume shared with its container); default: a temp dir",
    )
    group.addoption(
        "--acp-scratch-python",
        metavar="PYTHON",
        help="the Python the scratch validators run with on the backend's side (default: this one)",
    )
    group.addoption(
        "--server-command",
        help="the language server to check; {acp}, {token_file}, {data_dir} and {facade} "
        "are filled in from the backend options",
    )
    group.addoption(
        "--acp-conformance-report",
        type=Path,
        metavar="PATH",
        help="also write the table as PATH.json and PATH.md",
    )
    group.addoption(
        "--acp-conformance-timeout",
        type=float,
        default=20.0,
        help="seconds to wait for an event, a result or a diagnostic (default 20)",
    )


def parse_options(config: pytest.Config) -> KitOptions | None:
    suite = config.getoption("acp_conformance")
    if suite is None:
        return None
    acp = str(config.getoption("acp"))
    command = config.getoption("server_command")
    if suite == "server" and not command:
        raise pytest.UsageError("--acp-conformance=server needs --server-command")
    return KitOptions(
        suite=suite,
        acp=acp if acp == LOCAL else base_url(acp),
        # Absolute: the server under test runs in the scratch folder.
        token_file=_absolute(config.getoption("acp_token_file")),
        facade=str(config.getoption("facade")),
        data_dir=_absolute(config.getoption("acp_data_dir")),
        resource=config.getoption("acp_resource"),
        scratch_dir=_absolute(config.getoption("acp_scratch_dir")),
        scratch_python=config.getoption("acp_scratch_python"),
        server_command=tuple(shlex.split(command or "")),
        report=config.getoption("acp_conformance_report"),
        timeout=float(config.getoption("acp_conformance_timeout")),
    )


def _absolute(path: Path | None) -> Path | None:
    return None if path is None else path.absolute()
