"""The collector settles once the code is loaded (acp_client.heap)."""

from __future__ import annotations

import gc

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
