import attrs
import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_server.server import pulls


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.7", "neovim@v0.11", "emacs"])
def test_recorded_clients_get_push(profile: str) -> None:
    # neovim 0.11 can pull but cannot be sent workspace/diagnostic/refresh.
    assert not pulls(client_capabilities(profile))


def test_a_client_that_pulls_and_takes_refresh_gets_pull() -> None:
    base = client_capabilities("neovim@v0.11")
    assert base.workspace is not None
    refreshable = attrs.evolve(
        base,
        workspace=attrs.evolve(
            base.workspace,
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
        ),
    )
    assert pulls(refreshable)
    assert not pulls(types.ClientCapabilities())
