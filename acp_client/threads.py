"""How often the threads of a long-lived process hand the GIL over.

A thread that waits for the GIL gets it after the holder has run for the
switch interval (CPython's default: 5 ms). Work the event loop sends to a
thread that takes the GIL back many times is slowed by that much each
time the loop is busy: tree-sitter's Python grammar re-takes it all
through a parse, and a 10,000-line file's parse beside 10 ms of the
loop's own work took 75 ms instead of 34 (0.2 ms interval: 37 ms). The
price is more switches while two threads both compute, which these
processes rarely have.
"""

from __future__ import annotations

import sys

SWITCH_INTERVAL = 0.0002
"""Seconds a thread holds the GIL while another waits for it."""


def quick_handoffs() -> None:
    """Set the switch interval for a process that serves requests."""
    sys.setswitchinterval(SWITCH_INTERVAL)
