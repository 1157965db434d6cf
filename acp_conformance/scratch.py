"""The scratch resource the checks run on: a folder with a tiny ``acp.toml``.

Its validators are ``emit.py`` commands with deterministic findings (see
``scratch_files/``). The kit registers a temporary copy when the backend
lets it; otherwise ``--acp-resource NAME`` names one an operator prepared
with ``python -m acp_conformance.scratch DIR`` on the backend's machine.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from uuid import uuid4

from acp_client.paths import CONFIG_FILE
from acp_conformance.wire import Wire

FILES = ("emit.py", "sample.py", "fixme.txt")
REQUIRED, INFORMATIONAL, PASSING, TOGGLE, FIXABLE = (
    "conf-required",
    "conf-informational",
    "conf-passing",
    "conf-toggle",
    "conf-fixable",
)
VALIDATIONS = (REQUIRED, INFORMATIONAL, PASSING, TOGGLE, FIXABLE)
SAMPLE = "sample.py"


def write_scratch(root: Path, python: str = sys.executable) -> Path:
    """Create the scratch folder at ``root``; its commands run ``python``."""
    root.mkdir(parents=True, exist_ok=True)
    source = resources.files(__package__).joinpath("scratch_files")
    for name in FILES:
        with resources.as_file(source.joinpath(name)) as path:
            shutil.copyfile(path, root / name)
    template = source.joinpath(f"{CONFIG_FILE}.in").read_text("utf-8")
    (root / CONFIG_FILE).write_text(template.replace("{python}", json.dumps(python)), "utf-8")
    (root / "toggle.txt").write_text("pass\n", "utf-8")
    return root


@dataclass
class Scratch:
    """The resource the checks use. ``root`` is ``None`` when its files are
    not on this machine (then checks that edit files skip)."""

    id: str
    name: str
    root: Path | None
    registered: bool


class ScratchUnavailable(Exception):
    """Neither registration nor ``--acp-resource`` gave a scratch resource."""


async def prepare(
    wire: Wire, parent: Path, prepared: str | None, python: str | None = None
) -> tuple[Scratch, str]:
    """The scratch resource and its root as the backend sees it: ``prepared``
    (a resource's name or id), else a new folder under ``parent``, registered."""
    if prepared is not None:
        listed = await wire.call("resource.list", {})
        for resource in listed.get("result", {}).get("resources", []):
            if prepared in (resource.get("id"), resource.get("name")):
                root = Path(resource["root"])
                local = root if (root / "emit.py").is_file() else None
                return Scratch(resource["id"], resource["name"], local, False), str(root)
        raise ScratchUnavailable(f"--acp-resource {prepared!r} is not in resource.list")
    name = f"acp-conformance-{uuid4().hex[:8]}"
    root = write_scratch(parent / name, python or sys.executable)
    answer = await wire.call("resource.register", {"path": str(root), "name": name})
    if "result" not in answer:
        raise ScratchUnavailable(
            f"resource.register refused the scratch folder: {answer.get('error')}; "
            "prepare one with `python -m acp_conformance.scratch DIR` and pass --acp-resource"
        )
    resource = answer["result"]
    return Scratch(resource["id"], resource["name"], root, True), str(resource["root"])


async def release(wire: Wire, scratch: Scratch) -> None:
    if scratch.registered:
        await wire.call("resource.unregister", {"resource": scratch.id})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--python"):
        sys.stderr.write("usage: python -m acp_conformance.scratch DIR [--python PYTHON]\n")
        return 2
    root = write_scratch(Path(args[0]).resolve(), args[2] if len(args) == 3 else sys.executable)
    sys.stdout.write(f"scratch resource written to {root}; register it with your backend\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
