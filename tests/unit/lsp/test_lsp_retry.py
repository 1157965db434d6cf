"""Classify before retrying: what ends the wait between two attempts."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types

from acp_client.errors import (
    AuthenticationError,
    AuthenticationRequired,
    BackendTimeout,
    BackendUnreachable,
    Forbidden,
    InternalError,
    ServerFault,
    StreamDropped,
    TlsError,
    VersionMismatch,
)
from lsp_server.backend import REQUEST_GAP, Prompt, RetryGate, is_refusal
from lsp_server.notices import Notices

ANY = frozenset(Prompt)
CHANGE = frozenset({Prompt.CHANGE})


@pytest.mark.parametrize(
    "failure",
    [
        VersionMismatch("speaks 9.0"),
        AuthenticationError("HTTP 401"),
        AuthenticationRequired("bad token"),
        Forbidden("not for you"),
    ],
)
def test_a_refusal_is_not_an_outage(failure: Exception) -> None:
    assert is_refusal(failure)


@pytest.mark.parametrize(
    "failure",
    [
        BackendUnreachable("refused"),
        BackendTimeout("slow"),
        ServerFault("503", status=503),
        StreamDropped("ended"),
        TlsError("handshake"),
        InternalError("bug"),
        RuntimeError("unexpected"),
        None,
    ],
)
def test_an_outage_is_not_a_refusal(failure: Exception | None) -> None:
    assert not is_refusal(failure)


async def waited(
    gate: RetryGate, seconds: float, *, ended_by: frozenset[Prompt], watch: Path | None = None
) -> float:
    started = time.monotonic()
    await gate.wait(seconds, ended_by=ended_by, watch=watch)
    return time.monotonic() - started


async def test_the_timer_ends_a_wait_nobody_prompts() -> None:
    assert 0.1 <= await waited(RetryGate(), 0.1, ended_by=ANY) < 1


async def test_a_request_ends_an_outage_wait_but_not_sooner_than_the_gap() -> None:
    gate = RetryGate()
    gate.attempting()
    waiting = asyncio.ensure_future(waited(gate, 30, ended_by=ANY))
    await asyncio.sleep(0)
    gate.prompt(Prompt.REQUEST)
    assert REQUEST_GAP * 0.9 <= await waiting < 5


async def test_a_request_does_not_end_a_refusal_wait_a_change_does() -> None:
    gate = RetryGate()
    waiting = asyncio.ensure_future(waited(gate, 30, ended_by=CHANGE))
    await asyncio.sleep(0)
    gate.prompt(Prompt.REQUEST)
    await asyncio.sleep(0.1)
    assert not waiting.done()
    gate.prompt(Prompt.CHANGE)
    assert await waiting < 1


async def test_a_prompt_outside_a_wait_is_not_kept_for_the_next() -> None:
    gate = RetryGate()
    gate.prompt(Prompt.CHANGE)  # while an attempt runs: that attempt is the one
    assert await waited(gate, 0.2, ended_by=ANY) >= 0.2


async def test_a_changed_token_file_ends_a_refusal_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lsp_server.backend.TOKEN_FILE_CHECK", 0.05)
    token = tmp_path / "token"
    token.write_text("old\n")
    gate = RetryGate()
    gate.attempting(token)
    waiting = asyncio.ensure_future(waited(gate, 30, ended_by=CHANGE, watch=token))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    token.write_text("a new token\n")
    assert await waiting < 2


def test_a_refusal_is_said_once_until_it_changes_or_the_stream_proves_healthy() -> None:
    said: list[tuple[str, types.MessageType]] = []
    notices = Notices(lambda text, kind: said.append((text, kind)), lambda _: None)
    refusal = VersionMismatch("speaks 9.0", remedy="upgrade")
    for _ in range(3):
        notices.refused(refusal, "/run/token")
    ((text, kind),) = said
    assert kind == types.MessageType.Error
    assert "speaks 9.0 (upgrade)" in text and "/run/token" in text
    notices.refused(Forbidden("no access"), None)
    assert len(said) == 2
    notices.healthy()
    notices.refused(Forbidden("no access"), None)
    assert len(said) == 3


async def test_a_token_file_changed_during_the_attempt_ends_the_wait_at_once(
    tmp_path: Path,
) -> None:
    token = tmp_path / "token"
    token.write_text("old\n")
    gate = RetryGate()
    gate.attempting(token)
    token.write_text("rotated while the attempt was refused\n")
    assert await waited(gate, 30, ended_by=CHANGE, watch=token) < 1
