"""Token sources, the reconnect policy and failure classification rules."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from acp_client.errors import (
    AuthenticationError,
    BackendTimeout,
    BackendUnreachable,
    ServerFault,
    TlsError,
)
from acp_client.transport import TOKEN_ENV
from acp_client.transport.failures import classify
from acp_client.transport.http import resolve_token
from acp_client.transport.policy import StreamPolicy

SECRET = "s3cr3t-token-value"


def test_an_explicit_token_wins(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n", encoding="utf-8")
    environ = {TOKEN_ENV: "from-env"}
    assert resolve_token("explicit", token_file, environ) == "explicit"
    assert resolve_token(None, token_file, environ) == "from-file"
    assert resolve_token(None, None, environ) == "from-env"
    assert resolve_token(None, None, {}) is None


def test_a_token_file_gives_its_first_line_trimmed(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(f"  {SECRET}  \n# a comment line\n", encoding="utf-8")
    assert resolve_token(None, token_file, {}) == SECRET


@pytest.mark.parametrize("content", [None, b"", b"  \n\n", b"\xff\xfe" + SECRET.encode()])
def test_a_bad_token_file_is_an_authentication_error_naming_the_file_not_its_content(
    tmp_path: Path, content: bytes | None
) -> None:
    token_file = tmp_path / "token"
    if content is not None:
        token_file.write_bytes(content)
    with pytest.raises(AuthenticationError) as caught:
        resolve_token(None, token_file, {TOKEN_ENV: SECRET})
    assert str(token_file) in str(caught.value)
    assert SECRET not in str(caught.value)


def test_backoff_grows_exponentially_is_capped_and_jittered() -> None:
    policy = StreamPolicy(backoff_initial=0.5, backoff_max=4.0)
    for failures, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (10, 4.0)]:
        delays = {policy.backoff(failures) for _ in range(50)}
        assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
        assert len(delays) > 1  # jitter: clients do not reconnect in lockstep


def test_the_silence_window_is_a_multiple_of_the_keepalive() -> None:
    assert StreamPolicy().silence_timeout == 45.0
    assert StreamPolicy(keepalive_interval=2.0, silence_factor=2.5).silence_timeout == 5.0


def _chained(outer: Exception, *causes: BaseException) -> Exception:
    current: BaseException = outer
    for cause in causes:
        current.__cause__ = cause
        current = cause
    return outer


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (httpx.ConnectError("x"), BackendUnreachable),
        (httpx.ReadError("x"), BackendUnreachable),
        (httpx.ConnectTimeout("x"), BackendTimeout),
        (httpx.ReadTimeout("x"), BackendTimeout),
        (httpx.PoolTimeout("x"), BackendTimeout),
        (httpx.RemoteProtocolError("x"), ServerFault),
        (
            _chained(httpx.ConnectError("x"), OSError(), ssl.SSLCertVerificationError()),
            TlsError,
        ),
        # The words mean nothing: only types and causes are looked at.
        (httpx.ConnectError("certificate verify failed: timeout"), BackendUnreachable),
        (httpx.ReadError("TLS handshake timed out, connection refused"), BackendUnreachable),
    ],
)
def test_failures_are_classified_by_type_and_cause(
    exc: httpx.HTTPError, expected: type[Exception]
) -> None:
    classified = classify(exc, "https://backend.example")
    assert type(classified) is expected
    assert "https://backend.example" in str(classified)
