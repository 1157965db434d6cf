"""The reference backend behind a wrapper that refuses this client.

Loaded by the server under test through ``--facade``. Each variant says no
as a real deployment would: a backend of another protocol version, a token
it rejects, a multi-tenant server that places a client's own folders but
will not list everyone's. Every call is written down (``recorded_calls``),
so a test counts what really crossed, ``acp.initialize`` above all.
A file ``accept`` in the data dir ends the refusal (the user fixed it) from
the next call on: a call already written down is answered as it was decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp_backend.facade import create_facade as create_reference
from acp_client.errors import (
    AuthenticationRequired,
    Forbidden,
    RemoteError,
    ServerFault,
    VersionMismatch,
)
from tests.support.recording_facade import CALLS_FILE, RecordingFacade

ACCEPT_FILE = "accept"


class RefusingFacade(RecordingFacade):
    method = "acp.initialize"

    def refusal(self) -> Exception:
        raise NotImplementedError

    async def dispatch(self, method: str, params: Mapping[str, Any] | None) -> Any:
        # Decided before the call is written down: a test that sees the call
        # and then accepts must not turn that very call into a success.
        refused = method == self.method and not (self.record.parent / ACCEPT_FILE).exists()
        answer = await super().dispatch(method, params)  # recorded, and really answered
        if refused:
            raise self.refusal()
        return answer


class OtherVersionFacade(RefusingFacade):
    def refusal(self) -> RemoteError:
        return VersionMismatch(
            "this backend speaks ACP 9.0 only", remedy="upgrade acp-lsp to a 9.x release"
        )


class TokenRefusingFacade(RefusingFacade):
    def refusal(self) -> RemoteError:
        return AuthenticationRequired("the token is not valid", remedy="ask for a new token")


class ListForbiddingFacade(RefusingFacade):
    method = "resource.list"

    def refusal(self) -> RemoteError:
        return Forbidden("this client may not list every resource")


class DownFacade(RefusingFacade):
    """An outage: every ``acp.initialize`` fails as a 503 would."""

    def refusal(self) -> Exception:
        return ServerFault("the backend answered HTTP 503", status=503)


def _made(kind: type[RefusingFacade], data_dir: Path | None) -> RefusingFacade:
    assert data_dir is not None
    return kind(create_reference(data_dir), data_dir / CALLS_FILE)


def create_other_version_facade(data_dir: Path | None = None) -> RefusingFacade:
    return _made(OtherVersionFacade, data_dir)


def create_token_refusing_facade(data_dir: Path | None = None) -> RefusingFacade:
    return _made(TokenRefusingFacade, data_dir)


def create_list_forbidding_facade(data_dir: Path | None = None) -> RefusingFacade:
    return _made(ListForbiddingFacade, data_dir)


def create_down_facade(data_dir: Path | None = None) -> RefusingFacade:
    return _made(DownFacade, data_dir)


def accept(data_dir: Path) -> None:
    (data_dir / ACCEPT_FILE).touch()
