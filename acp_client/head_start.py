"""Local mode's head start: what an in-process backend's first results would
wait for, started before a command line runs anything (ADR 0031, 0038).

The reference backend reads validators' output in a parse server, which
forks a child per parse. ``acp-lsp check`` starts it before it connects:
forked from the check itself once the parsers are loaded (they are the
backend's own code, loaded anyway), it is up before the first tool starts
and costs no interpreter of its own. Standard library only: which entry
point starts it is named by string, as the default facade is.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from acp_client.paths import default_data_dir

LOCAL = "local"
"""The target meaning the backend serving the data dir if one runs, else in-process."""

DEFAULT_FACADE = "acp_backend.facade:create_facade"
"""The in-process backend local mode loads unless told another."""

BACKEND_FILE = "backend.json"
"""Where a backend serving a data dir says how to reach it (``discovery``)."""

PARSE_SERVER = "acp_backend.validation.fork_server:fork_here"
"""Starts the default backend's parse server, forked from the caller."""


def head_start(target: str, data_dir: Path | None, facade: str | None) -> bool:
    """Start the default backend's parse server now, when this process will
    host the backend for certain: ``target`` is local mode, ``facade`` the
    default one, and the data dir has no ``backend.json`` (otherwise a
    backend serving it may be used instead). Whether it was started."""
    if target != LOCAL or (facade or DEFAULT_FACADE) != DEFAULT_FACADE:
        return False
    if ((data_dir or default_data_dir()).expanduser() / BACKEND_FILE).exists():
        return False
    module, _, name = PARSE_SERVER.partition(":")
    try:
        start = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return False  # no reference backend here: connecting says so, in its words
    start()
    return True
