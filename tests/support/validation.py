"""Validation fixtures, and validator processes watched by process group."""

from __future__ import annotations

from pathlib import Path

from tests.support.waiting import until

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "validation"

# A validator that starts a child of its own, says who they are, and hangs.
HANGING_VALIDATOR = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(sys.argv[1] + ".tmp", "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
"""


def read_pids(path: Path) -> list[int]:
    """The pids ``HANGING_VALIDATOR`` wrote: its own (= its process group's), its child's."""
    return [int(pid) for pid in path.read_text().split()]


def running_in_group(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited while we looked
        state, group = fields[0], int(fields[2])
        if group == pgid and state != "Z":
            members.append(int(stat.parent.name))
    return members


async def group_ends(pgid: int) -> None:
    """Wait (briefly) until no live process is left in the group: a SIGKILLed
    process closes its pipes a moment before it stops being listed as running."""
    await until(lambda: running_in_group(pgid) == [], seconds=5)
