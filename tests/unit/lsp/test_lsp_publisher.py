import asyncio
import itertools
import time

from lsp_server.features.diagnostics.publisher import CoalescingPublisher

WINDOW = 0.05


async def test_first_change_goes_out_at_once() -> None:
    sent: list[str] = []
    publisher = CoalescingPublisher(sent.append, WINDOW)
    publisher.changed("a")
    publisher.changed("b")
    await asyncio.sleep(0)  # one turn of the loop
    assert sent == ["a", "b"]  # different keys never wait for each other


async def test_burst_collapses_into_one_trailing_publish_of_the_last_state() -> None:
    state = {"a": 0}
    sent: list[int] = []
    publisher = CoalescingPublisher(lambda key: sent.append(state[key]), WINDOW)
    state["a"] = 1
    publisher.changed("a")
    await asyncio.sleep(0)
    for value in range(2, 101):
        state["a"] = value
        publisher.changed("a")
    assert sent == [1]
    await asyncio.sleep(WINDOW * 2)
    assert sent == [1, 100]
    publisher.close()


async def test_at_most_one_publish_per_window() -> None:
    times: list[float] = []
    loop = asyncio.get_running_loop()
    publisher = CoalescingPublisher(lambda _: times.append(loop.time()), WINDOW)
    end = loop.time() + 0.3
    while loop.time() < end:
        publisher.changed("a")
        await asyncio.sleep(0.002)
    await asyncio.sleep(WINDOW * 2)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) >= 4
    assert min(gaps) >= WINDOW * 0.9


async def test_close_cancels_pending_publishes() -> None:
    sent: list[str] = []
    publisher = CoalescingPublisher(sent.append, WINDOW)
    publisher.changed("a")
    await asyncio.sleep(0)
    publisher.changed("a")
    publisher.close()
    await asyncio.sleep(WINDOW * 2)
    assert sent == ["a"]


async def sent_when_the_loop_ran(
    publisher: CoalescingPublisher[int], sent: list[int], keys: int, wait: float
) -> list[int]:
    """Change ``keys`` keys, then wait ``wait`` s; how many had been sent when
    the loop first ran something else (empty: it never did)."""
    for key in range(keys):
        publisher.changed(key)
    seen_between: list[int] = []
    asyncio.get_running_loop().call_soon(lambda: seen_between.append(len(sent)))
    await asyncio.sleep(wait)
    return seen_between


async def test_a_burst_goes_out_in_slices_and_the_loop_runs_in_between() -> None:
    sent: list[int] = []
    publisher = CoalescingPublisher(sent.append, WINDOW, slice_size=10)
    seen_between = await sent_when_the_loop_ran(publisher, sent, 100, 0.01)
    assert sorted(sent) == list(range(100))
    assert seen_between and 0 < seen_between[0] < 100  # something else ran mid-burst


async def test_a_slice_ends_when_its_time_is_up_whatever_its_size() -> None:
    sent: list[int] = []

    def slow_send(key: int) -> None:
        time.sleep(0.002)  # a big file's diagnostics on a loaded machine
        sent.append(key)

    publisher = CoalescingPublisher(slow_send, WINDOW, slice_size=64, slice_seconds=0.005)
    seen_between = await sent_when_the_loop_ran(publisher, sent, 30, 0.2)
    assert sorted(sent) == list(range(30))
    assert seen_between and seen_between[0] <= 3  # not all 30 in one go


async def test_draining_waits_while_the_editor_has_not_read_what_was_sent() -> None:
    sent: list[int] = []
    unread = {"bytes": 0}

    def send(key: int) -> None:
        sent.append(key)
        unread["bytes"] += 100

    publisher = CoalescingPublisher(
        send, WINDOW, slice_size=64, backed_up=lambda: unread["bytes"] >= 300
    )
    for key in range(10):
        publisher.changed(key)
    await asyncio.sleep(0.02)
    assert sent == [0, 1, 2]  # then the editor stopped reading
    unread["bytes"] = 0  # it read everything
    await asyncio.sleep(0.02)
    assert sent == [0, 1, 2, 3, 4, 5]
    unread["bytes"] = -1000  # it reads faster than we send
    await asyncio.sleep(0.05)
    assert sorted(sent) == list(range(10))


async def test_a_key_changed_again_while_due_is_sent_once() -> None:
    state = {"a": 0}
    sent: list[int] = []
    publisher = CoalescingPublisher(lambda key: sent.append(state[key]), WINDOW)
    publisher.changed("a")
    state["a"] = 7
    publisher.changed("a")
    await asyncio.sleep(0)
    assert sent == [7]


async def test_a_hold_sends_each_key_once_when_released() -> None:
    sent: list[str] = []
    publisher = CoalescingPublisher(sent.append, WINDOW, max_hold=10)
    publisher.hold()
    for _ in range(10):  # ten validations finishing over the same files
        for key in ("a", "b"):
            publisher.changed(key)
        await asyncio.sleep(0)
    assert sent == []
    publisher.release()
    await asyncio.sleep(0)
    assert sent == ["a", "b"]
    publisher.changed("c")  # released: live again
    await asyncio.sleep(0)
    assert sent == ["a", "b", "c"]


async def test_a_hold_delays_a_change_by_at_most_max_hold() -> None:
    sent: list[str] = []
    publisher = CoalescingPublisher(sent.append, WINDOW, max_hold=0.05)
    publisher.hold()  # a run that never ends
    publisher.changed("a")
    await asyncio.sleep(0.15)
    assert sent == ["a"]
    publisher.changed("b")  # still holding after the bound
    await asyncio.sleep(0)
    assert sent == ["a"]
    publisher.close()


async def test_a_hold_lets_a_key_out_once_then_keeps_it_until_release() -> None:
    """Ten validations over the same files: each file's first findings show
    within ``max_hold``, the rest when the run ends, not once per tick."""
    state = {"a": 0}
    sent: list[int] = []
    publisher = CoalescingPublisher(lambda key: sent.append(state[key]), WINDOW, max_hold=0.03)
    publisher.hold()
    state["a"] = 1
    publisher.changed("a")
    await asyncio.sleep(0.05)
    assert sent == [1]  # first findings of the run, at the first tick
    for value in range(2, 6):  # later validations, several ticks apart
        state["a"] = value
        publisher.changed("a")
        await asyncio.sleep(0.04)
    assert sent == [1]
    publisher.release()
    await asyncio.sleep(0)
    assert sent == [1, 5]
    publisher.close()


async def test_a_key_in_view_is_refreshed_at_every_tick_of_a_hold() -> None:
    sent: list[str] = []
    publisher = CoalescingPublisher(
        sent.append, WINDOW, max_hold=0.03, in_view=lambda key: key == "open"
    )
    publisher.hold()
    for key in ("open", "closed"):
        publisher.changed(key)
    await asyncio.sleep(0.05)
    assert sorted(sent) == ["closed", "open"]
    for key in ("open", "closed"):  # the next validation of the run
        publisher.changed(key)
    await asyncio.sleep(0.05)
    assert sorted(sent) == ["closed", "open", "open"]
    publisher.close()


async def test_a_tick_lets_out_what_fits_in_its_share_of_the_time_and_keys_in_view() -> None:
    """Sends that cost 2 ms, a tick every 100 ms, a fifth of it for sending:
    about ten files of the run go out early (and the open one), the rest
    when the run ends."""
    sent: list[str] = []

    def send(key: str) -> None:
        time.sleep(0.002)
        sent.append(key)

    publisher = CoalescingPublisher(
        send, WINDOW, max_hold=0.1, hold_share=0.2, in_view=lambda key: key == "open"
    )
    for key in ("w", "x", "y", "z"):  # sends before the run: their cost is measured
        publisher.changed(key)
    await asyncio.sleep(0.03)
    sent.clear()
    publisher.hold()
    files = [f"f{n}" for n in range(60)]
    for key in [*files, "open"]:
        publisher.changed(key)
    await asyncio.sleep(0.15)
    early = [key for key in sent if key != "open"]
    assert "open" in sent
    assert 3 <= len(early) <= 12
    assert early == files[: len(early)]  # in the order they changed
    publisher.release()
    await asyncio.sleep(0.3)
    assert sorted(sent) == sorted([*files, "open"])  # nothing changed again: sent once
    publisher.close()


async def test_a_first_tick_keeps_to_its_share_though_no_send_was_timed_before() -> None:
    """A loaded machine's first tick: nothing was sent before the run, and
    a send costs 2 ms. A fifth of a 100 ms tick lets out about ten files,
    not as many as a guessed cost would allow."""
    sent: list[str] = []

    def send(key: str) -> None:
        time.sleep(0.002)
        sent.append(key)

    publisher = CoalescingPublisher(send, WINDOW, max_hold=0.1, hold_share=0.2)
    publisher.hold()
    files = [f"f{n}" for n in range(60)]
    for key in files:
        publisher.changed(key)
    await asyncio.sleep(0.15)  # one tick
    assert 5 <= len(sent) <= 12
    assert sent == files[: len(sent)]
    publisher.release()
    await asyncio.sleep(0.3)
    assert sorted(sent) == sorted(files)
    publisher.close()


async def test_a_key_sent_during_a_hold_waits_at_most_max_stale() -> None:
    sent: list[str] = []
    publisher = CoalescingPublisher(sent.append, WINDOW, max_hold=0.02, max_stale=0.1)
    publisher.hold()  # a run that never ends
    publisher.changed("a")
    await asyncio.sleep(0.03)
    assert sent == ["a"]
    publisher.changed("a")
    await asyncio.sleep(0.05)
    assert sent == ["a"]
    await asyncio.sleep(0.12)
    assert sent == ["a", "a"]
    publisher.close()


async def test_keys_sent_are_forgotten_once_their_window_is_over() -> None:
    """What a burst's keys cost ends with the burst: no entry per file stays."""
    sent: list[int] = []
    publisher = CoalescingPublisher(sent.append, WINDOW)
    await sent_when_the_loop_ran(publisher, sent, 5000, 0.5)
    assert len(sent) == 5000
    assert publisher._last_sent == {}
    publisher.changed(1)  # and a key sent long ago goes out at once
    await asyncio.sleep(0)
    assert sent[-1] == 1
    publisher.close()
