import attrs
import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_server.capabilities import ClientSupport, as_it_behaves, column_quirk, pulls


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
    assert vscode.completion_markdown
    emacs = ClientSupport.of(types.InitializeParams(capabilities=client_capabilities("emacs")))
    assert not emacs.completion_markdown  # it announces no documentation format
    legacy = ClientSupport.of(
        types.InitializeParams(capabilities=client_capabilities("neovim@v0.7"))
    )
    assert legacy.apply_edit and not legacy.document_changes and not legacy.configuration
    assert ClientSupport.of(types.InitializeParams(capabilities=types.ClientCapabilities())) == (
        ClientSupport()
    )


LSP_MODE_8 = types.ClientInfo(name="emacs", version="GNU Emacs 28.2 (build 1, x86_64-pc-linux-gnu)")


def initialize(
    info: types.ClientInfo | None, encodings: list[str] | None = None
) -> types.InitializeParams:
    general = types.GeneralClientCapabilities(position_encodings=encodings)
    return types.InitializeParams(
        capabilities=types.ClientCapabilities(general=general), client_info=info
    )


def test_lsp_mode_before_9_is_served_code_points() -> None:
    params = initialize(LSP_MODE_8)
    quirk = column_quirk(params)
    assert quirk is not None and quirk.unit == types.PositionEncodingKind.Utf32
    behaves = as_it_behaves(params)
    assert behaves.capabilities.general is not None
    assert behaves.capabilities.general.position_encodings == ["utf-32"]
    assert behaves.client_info == params.client_info  # nothing else changes
    # Without any `general` at all, as lsp-mode 8.0 sends it.
    bare = types.InitializeParams(capabilities=types.ClientCapabilities(), client_info=LSP_MODE_8)
    assert column_quirk(bare) is quirk


@pytest.mark.parametrize(
    "params",
    [
        # lsp-mode 9.0 offers utf-32 first: taken at its word.
        initialize(LSP_MODE_8, ["utf-32", "utf-8", "utf-16"]),
        # eglot 1.9 sends no clientInfo and converts UTF-16 right.
        initialize(None),
        initialize(types.ClientInfo(name="Eglot", version="1.17")),
        initialize(types.ClientInfo(name="Emacs", version="29.1")),  # only the exact name
        initialize(types.ClientInfo(name="Visual Studio Code", version="1.95.0")),
    ],
)
def test_other_clients_are_taken_at_their_word(params: types.InitializeParams) -> None:
    assert column_quirk(params) is None
    assert as_it_behaves(params) is params


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim@v0.7", "neovim@v0.11", "emacs"])
def test_no_recorded_profile_has_a_column_quirk(profile: str) -> None:
    params = types.InitializeParams(capabilities=client_capabilities(profile))
    assert as_it_behaves(params) is params


@pytest.mark.parametrize(
    ("profile", "related", "described"),
    [
        ("visual-studio-code", True, True),
        ("neovim@v0.11", True, False),
        ("neovim@v0.7", True, False),
        ("emacs", False, False),  # eglot says no to both
    ],
)
def test_related_information_and_code_descriptions_as_announced(
    profile: str, related: bool, described: bool
) -> None:
    support = ClientSupport.of(types.InitializeParams(capabilities=client_capabilities(profile)))
    assert (support.related_information, support.code_description) == (related, described)


def test_a_318_client_may_announce_them_for_pulled_diagnostics() -> None:
    pulled = types.DiagnosticClientCapabilities(
        related_information=True, code_description_support=True
    )
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(diagnostic=pulled)
    )
    support = ClientSupport.of(types.InitializeParams(capabilities=caps))
    assert support.related_information and support.code_description
