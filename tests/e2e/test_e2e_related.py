"""A real tool's code flows reach the editor as related information, and its
rule links as code descriptions, to the clients that take them (issue 12,
"SARIF read in full").

The tool is clang's static analyzer (Debian clang 14.0.6; ``--analyzer-output
sarif``): its SARIF has ``codeFlows`` whose steps cross into a header, rule
``helpUri``s, and columns in code points (``columnKind``). The lines it points
at hold a tab, emoji and CJK text, so every unit differs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_e2e_diagnostics import expected_column
from tests.support.lsp_harness import PULL, Backend, Starter, project, uri

HEADER = (
    "#include <stdlib.h>\n"
    "/* 😀 你好 */\n"
    "static inline void release(char *p) { /* 中文 */ free(p); }\n"
)
SOURCE = (
    '#include "util.h"\n'
    "int f(int n) {\n"
    "\tchar *p = malloc(n); /* 😀 你好 */ if (n > 3) { release(p); }\n"
    "\treturn p[0]; /* 中 */\n"
    "}\n"
)
ACP_TOML = """
[[validations]]
name = "analyzer"
mode = "required"
format = "sarif"
command = ["clang", "--analyze", "--analyzer-output", "sarif", "-o", "analyzer.sarif", "leak.c"]
output_file = "analyzer.sarif"
"""
HELP = "https://clang-analyzer.llvm.org/available_checks.html#unix.Malloc"


def span(text: str, line: int, word: str, width: int | None = None) -> tuple[int, int, int]:
    """(line, start, end) of ``word`` on ``line`` of ``text``, in code points."""
    start = text.splitlines()[line].index(word)
    return line, start, start + (len(word) if width is None else width)


# The use-after-free's path, step by step: (file, place, what the analyzer says there).
USE_AFTER_FREE = [
    ("leak.c", span(SOURCE, 2, "malloc(n)"), "Memory is allocated"),
    ("leak.c", span(SOURCE, 2, "n > 3"), "Assuming 'n' is > 3"),
    ("leak.c", span(SOURCE, 2, "if", width=0), "Taking true branch"),
    ("leak.c", span(SOURCE, 2, "release(p)"), "Calling 'release'"),
    ("util.h", span(HEADER, 2, "free(p)"), "Memory is released"),
    ("leak.c", span(SOURCE, 2, "release(p)"), "Returning; memory was released via 1st parameter"),
    ("leak.c", span(SOURCE, 3, "p[0]"), "Use of memory after it is freed"),
]


@pytest.mark.parametrize("profile", ["visual-studio-code", PULL, "neovim@v0.11", "emacs"])
async def test_clang_code_flows_become_related_information(
    tmp_path: Path, backend: Backend, lsp: Starter, profile: str
) -> None:
    root = project(tmp_path / "app", {"util.h": HEADER, "leak.c": SOURCE, "acp.toml": ACP_TOML})
    await backend.register(root)
    session = await lsp(profile, [root])
    source = root / "leak.c"
    session.open(source, language="c")
    await session.wait_in_play(root)
    session.save(source, SOURCE, 2)  # runs the analyzer
    shown = await session.wait_diagnostics(source, lambda d: len(d) == 2)
    (freed,) = [d for d in shown if d.code == "unix.Malloc"]
    assert freed.message == "Use of memory after it is freed"
    if profile == "emacs":  # eglot announces neither relatedInformation nor codeDescription
        assert freed.related_information is None and freed.code_description is None
        return
    encoding = session.encoding
    texts = {"leak.c": SOURCE, "util.h": HEADER}
    expected = []
    for name, (line, start, end), message in USE_AFTER_FREE:
        text = texts[name].splitlines()[line]
        columns = (expected_column(text, start, encoding), expected_column(text, end, encoding))
        expected.append((uri(root / name), line, columns, message))
    related = [
        (
            r.location.uri,
            r.location.range.start.line,
            (r.location.range.start.character, r.location.range.end.character),
            r.message,
        )
        for r in freed.related_information or ()
        if r.location.range.end.line == r.location.range.start.line
    ]
    assert related == expected
    # After a tab, an emoji (2 UTF-16 units, 4 bytes) and CJK (1 unit, 3 bytes each).
    literal = {"utf-16": [(38, 43), (47, 54)], "utf-8": [(44, 49), (51, 58)]}[encoding]
    assert [related[1][2], related[4][2]] == literal
    # Only VS Code announces codeDescriptionSupport.
    described = freed.code_description.href if freed.code_description else None
    assert described == (HELP if profile in ("visual-studio-code", PULL) else None)
