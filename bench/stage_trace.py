"""``acp-lsp`` with a timestamp written at each stage of a save.

``python bench/stage_trace.py TRACE_FILE [acp-lsp arguments]`` runs the
language server as ``acp-lsp`` would, with the functions below wrapped so
that each writes ``<time.monotonic() ms> <stage>`` to ``TRACE_FILE`` as it
is entered. The clock is the one ``bench/lsp_wire.py`` stamps arrivals
with, so a save's stages and what the editor saw line up. Used by
``bench/bench_budget.py``; a wrapped name that is gone stops the server at
once rather than leaving a stage silently out.
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

SAVED = "didSave handled"
SPAWNING = "spawning the tool"
TOOL_ENDED = "tool ended"
JUDGING = "judging its output"
STORING = "storing the result"
PUBLISHING = "announcing an event"
TAKING = "session takes an event"
MAPPING = "mapping and writing"

STAGES: tuple[tuple[str, str, str], ...] = (
    # (module, attribute path, the mark its entry writes)
    ("lsp_server.session", "Session.saved", SAVED),
    ("acp_backend.validation.runner", "_start", SPAWNING),
    ("acp_backend.validation.runner", "_resolve", TOOL_ENDED),
    ("acp_backend.validation.validator", "judge", JUDGING),
    ("acp_backend.validation.runs", "ValidationRuns._store", STORING),
    ("acp_backend.eventlog", "EventLog._announce", PUBLISHING),
    ("lsp_server.session", "Session.take_event", TAKING),
    ("lsp_server.features.diagnostics", "Diagnostics._publish", MAPPING),
)


def traced(function: Callable[..., Any], stage: str, out: TextIO) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out.write(f"{time.monotonic() * 1000:.4f} {stage}\n")
        return function(*args, **kwargs)

    return wrapper


def install(out: TextIO) -> None:
    for module_name, path, stage in STAGES:
        owner: Any = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, name, traced(getattr(owner, name), stage, out))


def main() -> None:
    trace_file, *arguments = sys.argv[1:]
    out = open(trace_file, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (the process's life)
    install(out)
    sys.argv = ["acp-lsp", *arguments]
    from lsp_server.__main__ import entry

    entry()


if __name__ == "__main__":
    main()
