"""The parse server's lifetime, as its backend's end sees it (real processes)."""

from __future__ import annotations

from acp_backend.validation.fork_server import ForkServer


def test_the_parse_server_ends_by_itself_when_its_backend_does() -> None:
    """It shares the backend's stderr: until it ends, whoever reads the
    backend's output (a CI log, ``acp-lsp check | tee``) keeps waiting."""
    server = ForkServer()
    server.connect().close()  # started, and far enough to have forked a child
    process = server._process
    assert process is not None and server._socket is not None
    server._socket.close()  # what the backend's exit does to it
    try:
        assert process.wait(timeout=30) == 0  # its own exit, not a kill
    finally:
        if process.poll() is None:
            process.kill()


def test_a_warmed_up_server_is_the_one_used() -> None:
    server = ForkServer()
    server.warm_up()
    try:
        server.connect().close()  # waits for the warm-up's start rather than starting another
        warmed = server._process
        server.connect().close()
        assert warmed is not None and server._process is warmed
        assert warmed.poll() is None
    finally:
        server._stop()
