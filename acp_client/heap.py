"""Garbage collection for a long-lived process holding many small objects.

A 10,000-finding result is ~40,000 objects. Allocating them triggers
CPython's cyclic collector over and over, and every so often a full pass
over everything alive, modules and classes included: 20-45 ms with the
GIL held, in whichever thread allocated, so the event loop stood still
mid-burst. Findings hold no reference cycles (reference counting frees
them), so the collector is only needed for the rare cycle.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

GEN0_THRESHOLD = 20_000
"""Allocations between young collections (CPython's default: 700)."""


def settle() -> None:
    """Keep what is alive now (the imported code, the loaded backend) out of
    every later collection, and collect less often. Call once the process
    has loaded what it runs on; calling again freezes what was added since."""
    gc.freeze()
    _, *older = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, *older)


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Load what the process runs on with the collector off, then ``settle``:
    loading the LSP types or the ACP contract creates ~100k objects that live
    as long as the process, and collecting while they load only walks them
    again and again (~20 ms of the server's start-up, ~10 ms of a check)."""
    gc.disable()
    try:
        yield
    finally:
        settle()
        gc.enable()
