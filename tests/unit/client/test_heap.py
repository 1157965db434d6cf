"""The collector settles once the code is loaded, and keeps large results
out of later collections (acp_client.heap)."""

from __future__ import annotations

import gc
import weakref

import pytest

from acp_client import heap


def test_settle_freezes_what_is_loaded_and_collects_less_often() -> None:
    before = gc.get_threshold()
    try:
        gc.unfreeze()
        heap.settle()
        assert gc.get_freeze_count() > 1000  # the imported modules, at least
        assert gc.get_threshold() == (heap.GEN0_THRESHOLD, *before[1:])
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_keep_freezes_what_is_held_and_collects_young_cycles_first() -> None:
    gc.collect()
    frozen = gc.get_freeze_count()
    try:
        held = [_Node() for _ in range(5_000)]  # a result just taken in
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # garbage, but only a collection can tell
        dead = weakref.ref(a)
        del a, b
        heap.keep()
        assert dead() is None  # collected, not frozen for good
        assert gc.get_freeze_count() >= frozen + len(held)
    finally:
        gc.unfreeze()


def test_only_a_large_result_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    kept: list[None] = []
    monkeypatch.setattr(heap, "keep", lambda: kept.append(None))
    heap.took_in(heap.KEEP_FINDINGS - 1)  # a save's few findings: nothing to do
    assert kept == []
    heap.took_in(heap.KEEP_FINDINGS)
    assert kept == [None]
