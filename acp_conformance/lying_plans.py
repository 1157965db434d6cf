"""The plans the lying relay (``liar``) misplaces, and what a server must do
when asked to apply one: refuse, send the editor nothing, write nothing,
tell the user.

Three lies, each on a plan of its own that changes ``fixme.txt``: a path
that climbs out with ``..``, an absolute path, and a path through a symlink
in the resource that leads out. Each leads to a copy of ``fixme.txt`` in a
folder beside the resource, so a server that trusted it would find the
file it expects there and write it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from acp_client.paths import path_to_uri
from acp_conformance.kit import Kit
from acp_conformance.lsp_session import Session, kit_converter

TARGET = "fixme.txt"
LINK = "acp-conformance-link"
NOT_APPLIED = ("applied", "in_editor")


@dataclass(frozen=True)
class Escape:
    name: str
    path: str  # what the lying preview names
    plan_id: str


@contextmanager
def escapes(kit: Kit, root: Path) -> Iterator[list[Escape]]:
    """A plan per lie, with the folder outside and the symlink in place;
    everything removed (and the plans cancelled) afterwards."""
    outside = root.parent / f"{root.name}-outside"
    outside.mkdir(exist_ok=True)
    original = (root / TARGET).read_text("utf-8")
    (outside / TARGET).write_text(original, "utf-8")
    paths = {
        "climbs out with '..'": f"../{outside.name}/{TARGET}",
        "is absolute": (outside / TARGET).as_posix(),
    }
    link = root / LINK
    try:
        link.symlink_to(outside, target_is_directory=True)
        paths["passes through a symlink that leads out"] = f"{LINK}/{TARGET}"
    except OSError:  # no symlinks here (Windows without the privilege): two lies
        pass
    first = original.splitlines()[0] if original else ""
    made: list[Escape] = []
    try:
        for n, (name, path) in enumerate(paths.items()):
            diff = f"--- a/{TARGET}\n+++ b/{TARGET}\n@@ -1 +1 @@\n-{first}\n+lie {n}\n"
            params = {"resource": kit.scratch.id, "title": f"conformance lie {n}", "diff": diff}
            plan = kit.run(kit.result("plan.create", params))
            made.append(Escape(name, path, plan["id"]))
        yield made
    finally:
        for escape in made:
            kit.run(kit.wire.call("plan.cancel", {"plan_id": escape.plan_id}))
        link.unlink(missing_ok=True)
        shutil.rmtree(outside, ignore_errors=True)


def applying(actions: Sequence[types.Command | types.CodeAction], plan_id: str) -> object | None:
    """The action that applies ``plan_id``: its title says apply, and it
    names the plan (in its command's arguments or data)."""
    converter = kit_converter()
    for action in actions:
        if "apply" in action.title.lower() and plan_id in json.dumps(converter.unstructure(action)):
            return action
    return None


async def find_action(session: Session, plan_id: str) -> object | None:
    """The applying action at ``fixme.txt``, once the server lists the plan."""
    document = types.TextDocumentIdentifier(path_to_uri(str(session.root / TARGET)))
    start = types.Position(0, 0)
    params = types.CodeActionParams(
        document, types.Range(start, start), types.CodeActionContext(diagnostics=[])
    )
    deadline = time.monotonic() + session.timeout
    while True:
        actions = await session.client.text_document_code_action_async(params) or []
        found = applying(actions, plan_id)
        if found is not None or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.1)


def edit_targets(edit: types.WorkspaceEdit) -> list[str]:
    """The URI of every file a workspace edit names."""
    uris = list(edit.changes or {})
    for change in edit.document_changes or ():
        if isinstance(change, types.TextDocumentEdit):
            uris.append(change.text_document.uri)
        elif isinstance(change, types.RenameFile):
            uris += [change.old_uri, change.new_uri]
        else:
            uris.append(change.uri)
    return uris


async def refusal_problems(session: Session, kit: Kit, escape: Escape, action: object) -> list[str]:
    """What went wrong when ``action`` was run for a lying plan."""
    if isinstance(action, types.CodeAction) and action.edit is not None:
        return [f"its code action carries the edit itself, to {edit_targets(action.edit)}"]
    command = action.command if isinstance(action, types.CodeAction) else action
    if not isinstance(command, types.Command):
        return ["its code action runs no command"]
    said, edits = len(session.said()), len(session.requests)
    errored = False
    try:
        await asyncio.wait_for(
            session.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command.command, command.arguments)
            ),
            session.timeout,
        )
    except TimeoutError:
        return [f"{command.command} was not answered within {session.timeout:g} s"]
    except Exception:  # an error answer: the editor shows it
        errored = True
    told = errored or bool(
        await session.wait_until(lambda: len(session.said()) > said, "a message")
    )
    sent = [p for m, p in session.requests[edits:] if m == "applyEdit"]
    problems = [f"sent the editor an edit to {edit_targets(p.edit)}" for p in sent]
    plan = await kit.result("plan.get", {"plan_id": escape.plan_id})
    if plan["state"] in NOT_APPLIED:
        problems.append(f"the plan was recorded {plan['state']}")
    if not told:
        problems.append("the user was not told why nothing happened")
    return problems
