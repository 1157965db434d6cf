import attrs
import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_server.capabilities import ClientSupport, pulls


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


def test_client_support_is_read_once_from_the_recorded_profiles() -> None:
    vscode = ClientSupport.of(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            client_info=types.ClientInfo(name="Visual Studio Code", version="1.95.0"),
        )
    )
    assert (vscode.client_name, vscode.client_version) == ("Visual Studio Code", "1.95.0")
    assert vscode.apply_edit and vscode.document_changes and vscode.change_annotations
    assert vscode.code_action_resolve == {"edit"} and vscode.hover_markdown
    legacy = ClientSupport.of(
        types.InitializeParams(capabilities=client_capabilities("neovim@v0.7"))
    )
    assert legacy.apply_edit and not legacy.document_changes and not legacy.configuration
    assert ClientSupport.of(types.InitializeParams(capabilities=types.ClientCapabilities())) == (
        ClientSupport()
    )
