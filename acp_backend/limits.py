"""Limits a deployment sets through the environment, each read by one rule.

A limit is a positive number; an unset variable means its default, and
anything else (zero, a word) is one error naming the variable and what it
limits, never a silent fallback.
"""

from __future__ import annotations

import os

from acp_client.errors import InvalidState

VALIDATION_CONCURRENCY_ENV = "ACP_VALIDATION_CONCURRENCY"
PLAN_CONCURRENCY_ENV = "ACP_PLAN_CONCURRENCY"
SANDBOX_TTL_ENV = "ACP_SANDBOX_TTL_HOURS"
SANDBOX_TTL_HOURS = 24.0


def positive(name: str, default: float, limits: str) -> float:
    """``$name`` as a positive number, else ``default``."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise InvalidState(
            f"${name} is {raw!r}, not a positive number",
            remedy=f"unset {name} or set it to {limits}",
        )
    return value


def validation_concurrency() -> int:
    """How many validators may run at once (default: the number of CPUs)."""
    return _whole(
        VALIDATION_CONCURRENCY_ENV, os.cpu_count() or 1, "how many validators may run at once"
    )


def plan_concurrency() -> int:
    """How many proposed fixes may work in a sandbox at once (default: as
    many as validators, since each re-runs them there)."""
    return _whole(
        PLAN_CONCURRENCY_ENV, validation_concurrency(), "how many plan sandboxes may work at once"
    )


def sandbox_ttl_seconds() -> float:
    """How long a ready plan keeps its sandbox before it expires."""
    hours = positive(SANDBOX_TTL_ENV, SANDBOX_TTL_HOURS, "the hours a ready plan's sandbox is kept")
    return hours * 3600


def _whole(name: str, default: int, limits: str) -> int:
    value = positive(name, default, limits)
    if value != int(value):
        raise InvalidState(
            f"${name} is {os.environ[name]!r}, not a whole number",
            remedy=f"unset {name} or set it to {limits}",
        )
    return int(value)
