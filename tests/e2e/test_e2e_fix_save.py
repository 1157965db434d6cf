"""After a fix-save, no finding computed on the old text is placed on the new
text, and no publish repeats the last one (issue 13, "Everywhere").

Two real validators: ``lint`` answers at once, ``todo`` a moment later. The
save inserts a line above both findings; while ``todo`` has not reported yet,
its old finding (line 0) would land on the new line 0, which is not a TODO.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from tests.support.lsp_harness import Backend, Starter, project, uri

TOOL = """
import sys, time
path, word, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
time.sleep(delay)
for number, line in enumerate(open(path, encoding="utf-8"), start=1):
    if word in line:
        print(f"{path}:{number}:1: {word} here")
"""

ACP_TOML = """
[[validations]]
name = "lint"
mode = "required"
format = "pattern"
command = ["{python}", "tool.py", "a.py", "BAD", "0"]

[[validations]]
name = "todo"
mode = "informational"
format = "pattern"
command = ["{python}", "tool.py", "a.py", "TODO", "0.6"]
"""


async def test_a_fix_save_never_places_an_old_finding_on_the_new_text(
    tmp_path: Path, backend: Backend, lsp: Starter
) -> None:
    before = "x = 1  # TODO tidy\nBAD\n"
    after = "import os\nx = 1  # TODO tidy\nBAD\n"
    root = project(
        tmp_path / "app",
        {"tool.py": TOOL, "a.py": before, "acp.toml": ACP_TOML.format(python=sys.executable)},
    )
    await backend.register(root)
    session = await lsp("neovim@v0.11", [root])
    file = root / "a.py"
    session.open(file, text=before)
    await session.wait_in_play(root)
    session.save(file, before, 2)
    await session.wait_diagnostics(file, lambda d: len(d) == 2)

    session.save(file, after, 3)
    lines = after.splitlines()
    await session.wait_diagnostics(file, lambda d: sorted(x.range.start.line for x in d) == [1, 2])
    published = [p for _, p in session.published if p.uri == uri(file) and p.version == 3]
    assert published, "nothing was published for the saved text"
    for params in published:
        for diagnostic in params.diagnostics:
            word = diagnostic.message.split()[0]
            assert word in lines[diagnostic.range.start.line], (
                f"{diagnostic.message!r} placed on {lines[diagnostic.range.start.line]!r}"
            )
    repeats = [a for a, b in itertools.pairwise(published) if a.diagnostics == b.diagnostics]
    assert not repeats, f"the same publish was sent twice in a row: {repeats}"
