"""Garbage collection for a long-lived process holding many small objects.

A 10,000-finding result is ~40,000 objects. Allocating them triggers
CPython's cyclic collector over and over, and every so often a full pass
over everything alive, modules and classes included: 20-45 ms with the
GIL held, in whichever thread allocated, so the event loop stood still
mid-burst. Findings hold no reference cycles (reference counting frees
them), so the collector is only needed for the rare cycle.

The findings a client holds are alive for as long as their result is the
latest: 100,000 of them are ~500,000 objects that every collection of the
generation they sit in walks again. ``keep`` takes a result's objects out
of the collections once it is held; young collections then stay a few
milliseconds (a collection of the middle generation over them held the
GIL 60-70 ms, and with it every thread, in a 100,000-finding burst).
"""

from __future__ import annotations

import gc

GEN0_THRESHOLD = 20_000
"""Allocations between young collections (CPython's default: 700)."""


def settle() -> None:
    """Keep what is alive now (the imported code, the loaded backend) out of
    every later collection, and collect less often. Call once the process
    has loaded what it runs on; calling again freezes what was added since."""
    gc.freeze()
    _, *older = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, *older)


KEEP_FINDINGS = 1_000
"""Findings in a result from which holding it calls for ``keep``."""


def took_in(findings: int) -> None:
    """A result with ``findings`` findings is held now: ``keep`` a large one."""
    if findings >= KEEP_FINDINGS:
        keep()


def keep() -> None:
    """What is alive now stays alive: collect the cycles among what is not
    frozen yet (a few ms: what was allocated since the last ``keep``), then
    freeze the survivors out of every later collection. Reference counting
    still frees them once replaced; what would leak is an object alive now
    that later dies in a cycle: findings, locations and results form none,
    and the tasks in flight at that moment are few."""
    gc.collect()
    gc.freeze()
