"""Completion benchmark, every ratio from one run.

Run from the repository root: ``python bench/bench_completion.py``.

- **Completion p50**, alternating between the two places acp-lsp completes:
  a preset's name in ``acp.toml`` (``preset = "``, every preset listed with
  its documentation) and a code after ``# noqa: `` on a line with a ruff
  finding, each request after an edit (a new document version). Floor: a
  bare pygls server answering every completion with a list as long, each
  item documented (``bench/completion_floor.py``, none of our code).
  Target: p50 <= 1.5x the floor's.
- **Backend calls while completing** (counted by the facade the server
  loads, ``bench/hover_facade.py``): completion is answered from what the
  session holds. Target: 0.

Output as the other row benchmarks (``bench/rows.py``): ``--json PATH``,
``--check``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from lsprotocol import types

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from acp_backend.facade import create_facade  # noqa: E402
from acp_client.models import Finding, Location, ValidationResult  # noqa: E402
from bench.bench_hover import Editor, p50, row  # noqa: E402
from bench.hover_facade import calls  # noqa: E402
from bench.rows import Row, run_bench  # noqa: E402
from bench.stored import failed_result  # noqa: E402

REQUESTS = 200
SOURCE = "import os\nx = 1\n"
TOML = '[[validations]]\npreset = "ruff"\n\n[[validations]]\npreset = "'


def unused_import(resource_id: str) -> ValidationResult:
    """ruff's F401 on ``import os``, as the backend stores it."""
    at = Location(path="a.py", line=0, character=7, end_line=0, end_character=9)
    flagged = Finding(location=at, message="`os` imported but unused", code="F401")
    return failed_result("ruff", resource_id, [flagged])


class Completer(Editor):
    """The bench editor with ``acp.toml`` open too, completing in either."""

    async def start(self, text: str) -> None:
        await super().start(text)
        self.toml = self.document.parent / "acp.toml"
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(self.toml.as_uri(), "toml", 1, TOML)
            )
        )

    async def complete(self, in_toml: bool) -> types.CompletionList | None:
        document = self.toml if in_toml else self.document
        line, character = (4, 10) if in_toml else (0, len("import os  # noqa: "))
        answer = await self.client.text_document_completion_async(
            types.CompletionParams(
                types.TextDocumentIdentifier(document.as_uri()), types.Position(line, character)
            )
        )
        assert answer is None or isinstance(answer, types.CompletionList)
        return answer


async def measure(editor: Completer, check: bool) -> float:
    samples = []
    for n in range(REQUESTS):
        editor.edit(f"import os  # noqa: \nx = {n}\n")
        ms, answer = await editor.timed(lambda n=n: editor.complete(in_toml=n % 2 == 0))
        if check:
            assert answer is not None and answer.items, f"nothing completed at request {n}"
        samples.append(ms)
    return p50(samples)


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        data, project = base / "data", base / "proj"
        project.mkdir()
        document = project / "a.py"
        document.write_text(SOURCE, encoding="utf-8")
        (project / "acp.toml").write_text('[[validations]]\npreset = "ruff"\n', encoding="utf-8")
        facade = create_facade(data)
        resource = await facade.dispatch("resource.register", {"path": str(project)})
        facade.services.store.insert_result(unused_import(resource["id"]))
        await facade.aclose()

        floor = Completer(
            [sys.executable, str(REPO / "bench" / "completion_floor.py")], [], document
        )
        await floor.start(SOURCE)
        floor_ms = await measure(floor, check=False)
        await floor.stop()

        command = [sys.executable, "-m", "lsp_server", "--data-dir", str(data)]
        command += ["--facade", "bench.hover_facade:create_facade"]
        editor = Completer(command, [project], document)
        await editor.start(SOURCE)
        try:
            deadline = asyncio.get_running_loop().time() + 60
            while not await editor.complete(in_toml=True):  # the schema comes with the listing
                assert asyncio.get_running_loop().time() < deadline, "acp-lsp never completed"
                await asyncio.sleep(0.05)
            before = calls(data)
            ours = await measure(editor, check=True)
            during = calls(data) - before
        finally:
            await editor.stop()
    return [
        row("completion p50 (acp.toml preset, # noqa code)", ours, "ms", floor_ms, 1.5),
        row("completion floor: bare pygls, as many items", floor_ms, "ms"),
        row(f"backend calls during {REQUESTS} completions", during, "calls", target=0),
    ]


if __name__ == "__main__":
    sys.exit(run_bench("completion", __doc__.split("\n\n")[0], lambda: asyncio.run(run())))
