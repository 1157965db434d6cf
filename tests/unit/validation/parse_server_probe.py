"""A command line's start of its parse server, run as a process of its own
(forking pytest's would copy its threads' locks): ``python
parse_server_probe.py ROOT [thread|no-fork]``. With ``thread``, another
thread runs meanwhile; with ``no-fork``, the system has no process to spare
when the command starts its server. The probe starts the server as ``acp-lsp
check`` does, has it read an output with a pattern of the user's,
interrupts it as a terminal's Ctrl-C would, has it read again, then closes
its end and waits for the server to end. Prints what it saw, as JSON.
Reads ``/proc`` (Linux)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from pathlib import Path

from acp_backend.validation import fork_server, isolation
from acp_backend.validation.runner import Ending, ProcessOutcome
from tests.unit.validation.validation_helpers import declared

USER_PATTERN = r'pattern = "^(?P<path>[^:]+):(?P<line>\\d+): (?P<message>.*)$"'


def refused() -> int:
    raise BlockingIOError(11, "Resource temporarily unavailable")


async def read(root: Path) -> int:
    config = declared(f'format = "pattern"\n{USER_PATTERN}\n')
    output = ProcessOutcome(Ending.EXITED, status=1, stdout="a.py:1: TODO\n")
    verdict = await isolation.judge_isolated(config, output, root, 100, 30.0)
    return len(verdict.findings)


def main() -> None:
    root = Path(sys.argv[1])
    (root / "a.py").write_text("x = 1\n", encoding="utf-8")
    if sys.argv[2:] == ["thread"]:
        threading.Thread(target=threading.Event().wait, daemon=True).start()
    fork = os.fork
    if sys.argv[2:] == ["no-fork"]:
        os.fork = refused
    fork_server.fork_here()
    os.fork = fork
    fork_server.SERVER.connect().close()  # a warm-up's start, from a thread, waited for
    server, end = fork_server.SERVER._process, fork_server.SERVER._socket
    assert server is not None and end is not None
    command = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")[:-1]
    found = [asyncio.run(read(root))]
    os.kill(server.pid, signal.SIGINT)
    found.append(asyncio.run(read(root)))
    end.close()  # what the command's exit does to it
    answer = {
        "forked": command == [os.fsencode(part) for part in sys.orig_argv],
        "found": found,
        "status": server.wait(timeout=30),
    }
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
