"""The server suite: any language server presenting ACP, through pytest-lsp,
once per client profile (docs/conformance.md).

Collected by the plugin for ``--acp-conformance=server``. The results the
server shows come from the scratch resource's validators, run through ACP
calls (``validation.run``) on the backend both the kit and the server use.
"""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LspSpecificationWarning

from acp_client.paths import CONFIG_FILE, path_to_uri
from acp_client.text import split_lines
from acp_conformance.kit import Kit
from acp_conformance.liar import LyingRelay
from acp_conformance.lsp_session import Session, spec_warnings, start
from acp_conformance.lying_plans import TARGET as LIED_ABOUT
from acp_conformance.lying_plans import escapes, find_action, refusal_problems
from acp_conformance.profiles import Profile, plaintext_hover, profiles
from acp_conformance.scratch import INFORMATIONAL, PASSING, REQUIRED, SAMPLE, TOGGLE
from acp_conformance.wire import open_wire

TARGETS = {
    REQUIRED: "required_target",
    INFORMATIONAL: "informational_target",
    TOGGLE: "toggle_target",
}
SEVERITY = types.DiagnosticSeverity
MARKDOWN, PLAINTEXT = types.MarkupKind.Markdown, types.MarkupKind.PlainText
REQUIRED_MESSAGE = "required fails"  # conf-required's finding (scratch_files/emit.py)
MARKDOWN_MARKUP = ("**", "```", "](")


@pytest.fixture(scope="module", params=list(profiles()))
def session(
    request: pytest.FixtureRequest, kit: Kit, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Session]:
    """The server under test, initialised as one editor, with the scratch
    resource's sample.py and acp.toml open and every validation run once."""
    profile = profiles()[request.param]
    root = kit.scratch.root
    if root is None:
        pytest.skip("the server suite needs the scratch resource's files on this machine")
    (root / "toggle.txt").write_text("fail\n", "utf-8")
    kit.run(kit.run_validations())
    # It declares validations but is in no resource: the user must be told.
    unregistered = tmp_path_factory.mktemp(f"unregistered-{profile.name}")
    (unregistered / CONFIG_FILE).write_text("# not registered with the backend\n", "utf-8")
    session = launch(kit, profile, root, unregistered)
    session.open(root / CONFIG_FILE, "toml")
    yield session
    close(kit, session)


def launch(
    kit: Kit,
    profile: Profile,
    root: Path,
    unregistered: Path | None = None,
    *,
    acp: str | None = None,
) -> Session:
    """The server under test, initialised as ``profile`` with ``root`` (and
    ``unregistered``) as workspace folders, and sample.py open; ``acp``: the
    backend it is given instead of the kit's."""
    folders = [root] if unregistered is None else [root, unregistered]
    argv = kit.options.server_argv(kit.data_dir, acp)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LspSpecificationWarning)
        client, requests, answer = kit.run(
            start(argv, profile, timeout_s=kit.options.timeout, folders=folders, root=root)
        )
    session = Session(
        client,
        profile,
        kit.runner,
        kit.options.timeout,
        root,
        unregistered if profile.workspace_folders else None,
        answer.capabilities,
        spec_warnings(caught),
        requests,
    )
    session.open(root / SAMPLE, "python")
    return session


def close(kit: Kit, session: Session) -> None:
    """shutdown and exit unless a check did, then stop the client."""
    if session.exited is None:
        try:
            kit.run(asyncio.wait_for(session.shutdown(), 5))
        except Exception as exc:  # the shutdown check reports it; the next profile must run
            warnings.warn(f"{session.profile.name}: shutdown failed: {exc}", stacklevel=1)
    kit.run(session.stop())


def target(root: Path, validation: str) -> tuple[int, str, int, int]:
    """The line, its text, and the code-point start and end of a validation's target."""
    word = TARGETS[validation]
    for number, line in enumerate(split_lines((root / SAMPLE).read_text("utf-8"))):
        if word in line:
            return number, line, line.index(word), line.index(word) + len(word)
    raise AssertionError(f"{word} is not in {SAMPLE}")


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in an LSP position encoding."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def of(diagnostics: list[types.Diagnostic], validation: str) -> list[types.Diagnostic]:
    return [d for d in diagnostics if d.source == validation or validation in d.message]


def severity_name(severity: SEVERITY | None) -> str:
    return "no severity" if severity is None else SEVERITY(severity).name


def brief(diagnostics: list[types.Diagnostic]) -> list[str]:
    return [
        f"{d.source} {severity_name(d.severity)} {d.range.start.line}:{d.range.start.character}"
        for d in diagnostics
    ]


def test_initialize(session: Session) -> None:
    """The server answers initialize with a position encoding the client offered."""
    offered = session.profile.encodings
    assert session.encoding in offered, f"encoding {session.encoding}, offered {offered}"


def test_capabilities_answered(session: Session) -> None:
    """Every request the server advertises (hover, code actions, symbols, pull) is answered."""
    caps, uri = session.capabilities, path_to_uri(str(session.root / SAMPLE))
    document = types.TextDocumentIdentifier(uri)
    start = types.Position(0, 0)
    client = session.client
    asked = {
        "hover": caps.hover_provider
        and client.text_document_hover_async(types.HoverParams(document, start)),
        "codeAction": caps.code_action_provider
        and client.text_document_code_action_async(
            types.CodeActionParams(
                document, types.Range(start, start), types.CodeActionContext(diagnostics=[])
            )
        ),
        "workspace/symbol": caps.workspace_symbol_provider
        and client.workspace_symbol_async(types.WorkspaceSymbolParams(query="")),
        "completion": caps.completion_provider
        and client.text_document_completion_async(types.CompletionParams(document, start)),
        "textDocument/diagnostic": caps.diagnostic_provider
        and client.text_document_diagnostic_async(types.DocumentDiagnosticParams(document)),
    }
    failed: list[str] = []
    for name, request in asked.items():
        if not request:
            continue
        try:
            session.run(asyncio.wait_for(request, session.timeout))
        except Exception as exc:
            failed.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
    assert not failed, f"advertised but not answered: {failed}"


def test_push_or_pull(session: Session) -> None:
    """Pull for a client that can pull with refresh (if offered), push otherwise, never both."""
    sample = session.root / SAMPLE
    session.run(session.wait_shown(sample, lambda shown: bool(of(shown, REQUIRED)), REQUIRED))
    pushed = session.client.diagnostics.get(path_to_uri(str(sample)), ())
    if session.pulls:
        assert not pushed, f"pulled and pushed too (shown twice): {brief(list(pushed))}"
    else:
        assert pushed, "a client that does not pull got no pushed diagnostics"


def test_severity_table(session: Session) -> None:
    """required failed: Error; informational failed: Warning; informational passed: Hint."""
    sample, toml = session.root / SAMPLE, session.root / CONFIG_FILE
    expected = {REQUIRED: SEVERITY.Error, INFORMATIONAL: SEVERITY.Warning}
    shown = session.run(
        session.wait_shown(
            sample, lambda s: all(of(s, name) for name in expected), f"{', '.join(expected)}"
        )
    )
    hints = session.run(session.wait_shown(toml, lambda s: bool(of(s, PASSING)), PASSING))
    expected[PASSING] = SEVERITY.Hint
    wrong = [
        f"{name} shown as {severity_name(d.severity)}, expected {expected[name].name}"
        for name in expected
        for d in of(shown if name != PASSING else hints, name)
        if d.severity != expected[name]
    ]
    assert not wrong, "; ".join(wrong)


@pytest.mark.parametrize("validation", [REQUIRED, INFORMATIONAL, TOGGLE])
def test_positions(session: Session, validation: str) -> None:
    """A finding after non-ASCII text lands on its column in the negotiated encoding."""
    line, text, begin, end = target(session.root, validation)
    shown = session.run(
        session.wait_shown(session.root / SAMPLE, lambda s: bool(of(s, validation)), validation)
    )
    encoding = session.encoding
    expected = (line, units(text[:begin], encoding), line, units(text[:end], encoding))
    got = [
        (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
        for d in of(shown, validation)
    ]
    assert got == [expected], f"{validation} at {got}, expected {expected} in {encoding}"


def test_clears_on_pass(session: Session, kit: Kit) -> None:
    """A passed required result clears that validation's diagnostics (and only those)."""
    sample = session.root / SAMPLE
    session.run(session.wait_shown(sample, lambda s: bool(of(s, TOGGLE)), "conf-toggle failing"))
    (session.root / "toggle.txt").write_text("pass\n", "utf-8")
    session.run(kit.run_validations((TOGGLE,)))
    shown = session.run(
        session.wait_shown(sample, lambda s: not of(s, TOGGLE), "conf-toggle cleared")
    )
    assert of(shown, REQUIRED), "clearing conf-toggle cleared conf-required too"


def test_unregistered_folder(session: Session) -> None:
    """A folder with an acp.toml in no registered resource is named once in a message."""
    folder = session.unregistered
    if folder is None:
        pytest.skip(f"{session.profile.name} sends no workspace folders")

    found = session.run(
        session.wait_until(lambda: [m for m in session.said() if str(folder) in m], "a message")
    )
    assert found, f"nothing said about {folder}; said: {session.said()}"
    assert len(found) == 1, f"said {len(found)} times: {found}"


def test_hover(session: Session) -> None:
    """Hover on a finding says what the platform knows about it."""
    if not session.capabilities.hover_provider:
        pytest.skip("the server does not advertise hover")
    sample = session.root / SAMPLE  # shown first: this check may run on its own
    session.run(session.wait_shown(sample, lambda s: bool(of(s, REQUIRED)), REQUIRED))
    line, text, begin, _ = target(session.root, REQUIRED)
    position = types.Position(line, units(text[:begin], session.encoding))
    document = types.TextDocumentIdentifier(path_to_uri(str(session.root / SAMPLE)))
    hover = session.run(
        session.client.text_document_hover_async(types.HoverParams(document, position))
    )
    assert hover is not None, "no hover on a finding"
    converter = default_converter()  # type: ignore[no-untyped-call]
    contents = json.dumps(converter.unstructure(hover.contents))
    assert "required fails" in contents or REQUIRED in contents, f"hover says {contents:.200}"


def test_hover_markup(session: Session, kit: Kit) -> None:
    """Hover on a finding: Markdown to a client that takes it, plain text to one that does not."""
    if not session.capabilities.hover_provider:
        pytest.skip("the server does not advertise hover (no hoverProvider)")
    formats = session.profile.hover_formats
    if MARKDOWN in formats:
        contents = finding_hover(session)
        assert contents.kind == MARKDOWN, (
            f"{session.profile.name}: hover is {contents.kind.value} for a client whose "
            f"contentFormat is {formats}: {contents.value[:160]!r}"
        )
        # The same editor announcing plain text only, on a server of its own.
        plain = launch(kit, plaintext_hover(session.profile), session.root)
        try:
            if plain.capabilities.hover_provider:
                check_plaintext(finding_hover(plain), plain.profile.name)
        finally:
            close(kit, plain)
    else:
        check_plaintext(finding_hover(session), session.profile.name)


def finding_hover(session: Session) -> types.MarkupContent:
    """The hover on conf-required's finding, once it is shown; a MarkupContent
    that holds its message."""
    sample = session.root / SAMPLE
    session.run(session.wait_shown(sample, lambda s: bool(of(s, REQUIRED)), REQUIRED))
    line, text, begin, _ = target(session.root, REQUIRED)
    position = types.Position(line, units(text[:begin], session.encoding))
    params = types.HoverParams(types.TextDocumentIdentifier(path_to_uri(str(sample))), position)
    deadline = time.monotonic() + session.timeout
    while True:  # what the server knows of the line may come after the diagnostic
        request = session.client.text_document_hover_async(params)
        hover = session.run(asyncio.wait_for(request, session.timeout))
        if hover is not None or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert hover is not None, f"{session.profile.name}: no hover on a finding"
    contents = hover.contents
    assert isinstance(contents, types.MarkupContent), (
        f"{session.profile.name}: hover contents are {type(contents).__name__}, not MarkupContent"
    )
    assert REQUIRED_MESSAGE in contents.value, (
        f"{session.profile.name}: hover lacks the finding's message "
        f"{REQUIRED_MESSAGE!r}: {contents.value[:160]!r}"
    )
    return contents


def check_plaintext(contents: types.MarkupContent, name: str) -> None:
    assert contents.kind == PLAINTEXT, (
        f"{name}: hover is {contents.kind.value} for a plain-text client: {contents.value[:160]!r}"
    )
    markup = [mark for mark in MARKDOWN_MARKUP if mark in contents.value]
    assert not markup, f"{name}: plain-text hover has Markdown {markup}: {contents.value[:160]!r}"


def test_code_actions(session: Session) -> None:
    """Code actions at a finding are answered, and every command they use is advertised."""
    caps = session.capabilities
    if not caps.code_action_provider:
        pytest.skip("the server does not advertise code actions")
    sample = session.root / SAMPLE
    shown = session.run(session.wait_shown(sample, lambda s: bool(of(s, REQUIRED)), REQUIRED))
    diagnostic = of(shown, REQUIRED)[0]
    params = types.CodeActionParams(
        types.TextDocumentIdentifier(path_to_uri(str(sample))),
        diagnostic.range,
        types.CodeActionContext(diagnostics=[diagnostic]),
    )
    actions = session.run(session.client.text_document_code_action_async(params)) or []
    provider = caps.execute_command_provider
    advertised = set(provider.commands if provider is not None else ())
    used = [command_of(action) for action in actions]
    unknown = [c for c in used if c is not None and c not in advertised]
    assert not unknown, f"commands not in executeCommandProvider: {unknown}"


def command_of(action: types.Command | types.CodeAction) -> str | None:
    if isinstance(action, types.Command):
        return action.command
    return action.command.command if action.command is not None else None


def test_completion(session: Session) -> None:
    """Completion in acp.toml, where advertised: a validation table's keys."""
    if not session.capabilities.completion_provider:
        pytest.skip("the server does not advertise completion")
    toml = session.root / CONFIG_FILE
    lines = toml.read_text("utf-8").splitlines()
    line = next(n for n, text in enumerate(lines) if text.startswith("mode ="))
    params = types.CompletionParams(
        types.TextDocumentIdentifier(path_to_uri(str(toml))), types.Position(line, 0)
    )
    deadline = time.monotonic() + session.timeout
    while True:  # the schema comes with the resource's listing
        answer = session.run(session.client.text_document_completion_async(params))
        items = answer.items if isinstance(answer, types.CompletionList) else answer or []
        labels = [item.label for item in items]
        if "mode" in labels or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert "mode" in labels, f"completion at a key of [[validations]] offers {labels[:10]}"


@pytest.fixture(scope="module")
def liar(kit: Kit) -> Iterator[LyingRelay]:
    """The kit's backend behind a relay that lies about where plans write."""
    if not kit.options.server_takes_acp:
        pytest.skip("--server-command has no {acp}: the kit cannot put a lying backend in front")
    relay = LyingRelay(lambda: open_wire(kit.options, kit.data_dir))
    relay.start()
    yield relay
    relay.stop()


def test_plan_paths_jailed(session: Session, kit: Kit, liar: LyingRelay) -> None:
    """A plan whose preview names a path out of its resource (climbing with
    '..', absolute, or through a symlink that leads out) is refused when
    applied: nothing sent to the editor, nothing written, the user told."""
    caps = session.capabilities
    if not caps.code_action_provider or not caps.execute_command_provider:
        pytest.skip("the server does not advertise code actions and commands")
    if not kit.serves("plan.create", "plan.preview", "plan.list", "plan.cancel"):
        pytest.skip("the backend does not serve plan.create, preview, list and cancel")
    root = session.root
    with escapes(kit, root) as lies:
        liar.lies = {escape.plan_id: escape.path for escape in lies}
        server = launch(kit, session.profile, root, acp=liar.url)
        try:
            server.open(root / LIED_ABOUT, "plaintext")
            failed = []
            for escape in lies:
                action = server.run(find_action(server, escape.plan_id))
                if action is None:
                    failed.append(f"a plan at {LIED_ABOUT} is offered no apply action")
                    continue
                for problem in server.run(refusal_problems(server, kit, escape, action)):
                    failed.append(f"a preview whose path {escape.name} ({escape.path}): {problem}")
            outside = root.parent / f"{root.name}-outside" / LIED_ABOUT
            if outside.read_text("utf-8") != (root / LIED_ABOUT).read_text("utf-8"):
                failed.append(f"{outside}, outside the resource, was written")
        finally:
            close(kit, server)
            liar.lies = {}
    assert not failed, "; ".join(failed)


def test_workspace_symbols(session: Session, kit: Kit) -> None:
    """workspace/symbol lists the registered resource."""
    if not session.capabilities.workspace_symbol_provider:
        pytest.skip("the server does not advertise workspace symbols")
    params = types.WorkspaceSymbolParams(query=kit.scratch.name)
    symbols = session.run(session.client.workspace_symbol_async(params)) or []
    names = [s.name for s in symbols]
    assert any(kit.scratch.name in name for name in names), f"symbols {names[:10]}"


def test_clean_shutdown(session: Session) -> None:
    """shutdown is answered and exit ends the process with status 0."""
    status = session.run(session.shutdown())
    assert status is not None, "the server did not exit within 5 s of exit"
    assert status == 0, f"exit status {status}; stderr: {session.stderr_tail()}"


def test_no_stdout_noise(session: Session) -> None:
    """Nothing but LSP frames on stdout."""
    found = session.stdout_problems()
    assert not found, "; ".join(found[:3])


def test_lsp_specification(session: Session) -> None:
    """pytest-lsp found nothing against the LSP specification in the whole session."""
    assert not session.spec_warnings, f"LspSpecificationWarning: {session.spec_warnings[:3]}"
