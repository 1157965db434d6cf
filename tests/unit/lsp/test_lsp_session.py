"""The session against a fake editor and a scripted backend: the one state,
changed only by notifications and events, never across an await; what a
change needs fetched comes in later as one more change; requests get a
snapshot that stays as it was."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from datetime import UTC, datetime

import pytest

from acp_client.events import PlanChanged, ValidationResultEvent
from acp_client.text import digest
from lsp_server.features import Feature
from lsp_server.listing import Listing
from lsp_server.roots import FileKey
from lsp_server.session import Session
from tests.support.factories import finding, result
from tests.unit.lsp.fakes import RESOURCE, FakeClient, FakeEditor, calls, plan, support

A, B = ("R", "a.py"), ("R", "b.py")
SANDBOX_ROOT = "/data/sandboxes/P1"


class Recorder(Feature):
    """A feature that only listens: which files changed, in order."""

    def __init__(self) -> None:
        self.changed: list[set[FileKey]] = []

    def files_changed(self, keys: Collection[FileKey]) -> None:
        self.changed.append(set(keys))


def started(client: FakeClient, **settings: object) -> tuple[Session, FakeEditor, Recorder]:
    backend_calls, editor = calls(client)
    session = Session(
        backend_calls,
        editor,
        backend_calls._notices,
        lambda: ["file:///r"],
        support=support(),
        encoding="utf-16",
        initial_settings=settings or None,
    )
    recorder = Recorder()
    session.features = (recorder,)
    return session, editor, recorder


def event(n: int, **fields: object) -> ValidationResultEvent:
    return ValidationResultEvent(event_id=n, at=datetime.now(UTC), **fields)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_slow_fetch_an_event_needs_holds_up_no_later_event() -> None:
    """A plan's result comes before anything says where the plan's sandbox
    is: the plan is fetched in the background (here it hangs), and the
    resource's next result is taken in at once."""
    client = FakeClient()
    session, _, recorder = started(client)
    await session.resync()
    planned = result("lint", findings=[finding("a.py", message="in the sandbox")], plan_id="P1")
    session.take_event(event(1, result=planned))
    session.take_event(event(2, result=result("lint", findings=[finding("b.py")])))
    assert recorder.changed[-1] == {B}  # taken in without waiting for plan.get
    await settle()
    assert "plan.get P1" in client.asked
    client.plans["P1"] = plan().model_copy(update={"sandbox_root": SANDBOX_ROOT})
    client.plans_known.set()
    await settle()
    sandbox = (f"R@{SANDBOX_ROOT}", "a.py")
    assert recorder.changed[-1] == {sandbox}
    assert [m.message for m in session.results.marks(sandbox)] == ["in the sandbox"]
    assert session.results.marks(A) == []  # never on the real file


async def test_a_partial_result_that_continues_nothing_is_listed_again_in_the_background() -> None:
    whole = result("lint", findings=[finding("a.py", message="whole")], at=10)
    client = FakeClient(results={None: [whole]})
    session, _, _ = started(client)
    await session.resync()
    partial = result("lint", findings=[], at=20)
    session.take_event(event(1, result=partial, covered=("a.py",), base_result_id="unknown"))
    assert client.asked.count("latest_results None") == 1  # the resync's, not yet the relist
    await settle()
    assert client.asked.count("latest_results None") == 2
    assert [m.message for m in session.results.marks(A)] == ["whole"]


async def test_results_of_a_resource_outside_the_session_are_ignored() -> None:
    session, _, recorder = started(FakeClient())
    await session.resync()
    session.take_event(event(1, result=result("lint", findings=[finding("a.py")], resource="X")))
    assert recorder.changed == [] and session.results.files() == []


async def test_a_snapshot_stays_as_it_was_whatever_happens_next() -> None:
    client = FakeClient(results={None: [result("lint", findings=[finding("a.py", message="1")])]})
    session, _, _ = started(client)
    await session.resync()
    session.opened("file:///r/a.py", 1, "x = 1\n")
    taken = await session.snapshot_of("file:///r/a.py")
    session.edited("file:///r/a.py", 2, "x = 2\n")
    session.take_event(
        event(1, result=result("lint", findings=[finding("a.py", message="2")], at=9))
    )
    assert taken.document is not None and taken.document.version == 1
    assert taken.document.text == "x = 1\n"
    assert [d.message for d in taken.diagnostics] == ["1"]
    now = session.snapshot("file:///r/a.py")
    assert now.document is not None and now.document.version == 2
    assert [d.message for d in now.diagnostics] == ["2"]


async def test_opening_a_file_with_other_text_than_the_tools_read_clears_it_when_asked() -> None:
    read = result("lint", findings=[finding("a.py")], file_hashes={"a.py": digest("old\n")})
    client = FakeClient(results={None: [read]})
    session, _, _ = started(client, clearOnEdit=True)
    await session.resync()
    session.opened("file:///r/a.py", 1, "old\n")
    await session.snapshot_of("file:///r/a.py")
    assert len(session.results.marks(A)) == 1  # the text the validator saw: kept
    session.closed("file:///r/a.py")
    session.opened("file:///r/a.py", 2, "new\n")
    await session.snapshot_of("file:///r/a.py")
    assert session.results.marks(A) == []


@pytest.mark.parametrize(
    "spelling",
    ["file:///r/a.py", "file:///r/%61.py", "file:///r/a%2Epy", "file://localhost/r/a.py"],
)
async def test_a_file_is_shown_under_the_uri_the_editor_opened_it_with(spelling: str) -> None:
    session, _, _ = started(FakeClient())
    await session.resync()
    session.opened(spelling, 1, "x = 1\n")
    await session.snapshot_of(spelling)
    document = session.document_at(A)
    assert document is not None and document.uri == spelling
    await session.resync()  # placed again from the session's own records: same spelling
    again = session.document_at(A)
    assert again is not None and again.uri == spelling
    assert session.roots.uri_of(A) == spelling


async def test_a_plan_an_event_brought_while_a_listing_was_on_its_way_survives_it() -> None:
    client = FakeClient(plans={"P1": plan(plan_id="P1")})
    session, _, _ = started(client)
    await session.resync()
    began = Listing(RESOURCE, session.results.now(), session.mirror.tick, plans=())
    session.take_event(PlanChanged(event_id=1, at=datetime.now(UTC), plan=plan(plan_id="P2")))
    session.mirror.take_listing(began)  # it began before P2 was made, and never saw it
    assert [p.id for p in session.mirror.plans("R")] == ["P2"]  # P1 went: the listing is newer


async def test_a_document_keeps_the_text_last_saved_until_the_next_save() -> None:
    session, _, _ = started(FakeClient())
    await session.resync()
    session.opened("file:///r/a.py", 1, "one\n")
    session.edited("file:///r/a.py", 2, "two\n")
    session.edited("file:///r/a.py", 3, "three\n")
    document = session.documents["file:///r/a.py"]
    assert (document.text, document.last_saved) == ("three\n", "one\n")
    session.saved("file:///r/a.py")
    document = session.documents["file:///r/a.py"]
    assert (document.text, document.last_saved) == ("three\n", "three\n")
