"""``connect()``: one call from a target string to a ready ``AcpClient``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from acp_client.client import AcpClient
from acp_client.discovery import HEALTH_TIMEOUT, discover, server_appeared
from acp_client.head_start import DEFAULT_FACADE, LOCAL
from acp_client.paths import default_data_dir
from acp_client.transport import Transport
from acp_client.transport.inprocess import InProcessTransport

if TYPE_CHECKING:
    from acp_client.transport.policy import StreamPolicy

log = logging.getLogger(__name__)


async def connect(
    target: str = LOCAL,
    *,
    data_dir: Path | None = None,
    token: str | None = None,
    token_file: Path | None = None,
    ca_bundle: Path | None = None,
    facade: str = DEFAULT_FACADE,
    connect_timeout: float = 5.0,
    read_timeout: float = 30.0,
    stream_policy: StreamPolicy | None = None,
    health_timeout: float = HEALTH_TIMEOUT,
) -> AcpClient:
    """A client for ``target``: ``"local"`` or a server URL.

    ``"local"``: the backend already serving ``data_dir`` (found through its
    ``backend.json`` with proof of life) over loopback, else the facade
    ``facade`` loaded in this process. A URL (``https://``; plain ``http://``
    only to loopback): that server, with ``token``, else ``token_file``,
    else ``$ACP_TOKEN``.
    """
    # The HTTP client loads only when a server is used: in local mode with
    # no server running, httpx (and what it imports) would be ~90 ms for nothing.
    transport: Transport
    if target == LOCAL:
        directory = (data_dir or default_data_dir()).expanduser()
        running = await discover(directory, health_timeout)
        if running is not None:
            from acp_client.transport.http import HttpTransport

            log.debug("using the backend serving %s on port %d", directory, running.port)
            transport = HttpTransport(
                running.url,
                token=running.token,
                ca_bundle=Path(running.tls_cert) if running.tls_cert else None,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                stream_policy=stream_policy,
            )
        else:
            transport = InProcessTransport.load(facade, directory, read_timeout)
    else:
        from acp_client.transport.http import HttpTransport, resolve_token

        transport = HttpTransport(
            target,
            token=resolve_token(token, token_file),
            ca_bundle=ca_bundle,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            stream_policy=stream_policy,
        )
    return AcpClient(transport)


def in_process(client: AcpClient) -> bool:
    """Whether ``client`` runs its backend in this process (local mode's fallback)."""
    return isinstance(client.transport, InProcessTransport)


def should_rediscover(client: AcpClient, data_dir: Path | None = None) -> bool:
    """True when ``client`` fell back to an in-process backend and a server now
    serves ``data_dir``: close it and ``connect`` again to share that server.
    Cheap (a file read and a lock probe, no network): fine on every request."""
    directory = (data_dir or default_data_dir()).expanduser()
    return in_process(client) and server_appeared(directory)
