"""Excerpts (``syntax.parse_excerpt``): the entity from parsing only what a
line needs is the whole file's, or there is none and the file is parsed.

The property is checked on every line of the real-world fixtures of every
code language and on sources written to mislead indentation (column-0 text
inside strings, commented-out code, preprocessor lines, multi-line headers,
``} else {``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from acp_backend.inspect.entities import Definition, definition_at, definition_in_excerpt
from acp_backend.inspect.excerpt import BLOCK_BUDGET
from acp_backend.inspect.languages import language_of
from acp_backend.inspect.syntax import Trees, parse_excerpt

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "inspect"
CODE = sorted(
    path.name
    for path in FIXTURES.iterdir()
    if path.is_file()
    and (found := language_of(path.name, path.read_text(encoding="utf-8")))
    and not found.data
)

MISLEADING = {
    "strings.py": '''\
import textwrap


def usage() -> str:
    """Print usage."""
    text = """
def fake():
    pass

class Fake:
    x = 1
"""
    return textwrap.dedent(text)


class Holder:
    """Holds."""

    @property
    def value(self) -> int:
        # a comment
        return 1

    @staticmethod
    def build(
        a: int,
        b: int,
    ) -> "Holder":
        return Holder()
''',
    "commented.py": """\
def outer():
    x = 1
# def commented_out():
#     pass
    y = 2
    return x + y


def after():
    return 3
""",
    "preprocessor.c": """\
/* Count things. */
int count(int n)
{
    int total = 0;
#ifdef DEBUG
    total = -1;
#endif
    for (int i = 0; i < n; i++) {
        total += i;
    }
    if (total > 10) {
        total = 10;
    } else {
        total = 0;
    }
    return total;
}

struct point {
    int x;
    int y;
};
""",
    "Header.java": """\
package demo;

@Deprecated
public final class Header
        extends Object
        implements Runnable {

    /** Runs. */
    @Override
    public void run() {
        if (true) {
            System.out.println("a");
        } else {
            System.out.println("b");
        }
    }

    static class Inner {
        /** Deep. */
        int deep(int a,
                 int b) {
            return a + b;
        }
    }
}
""",
    "nested.rb": """\
module Billing
  # An invoice.
  class Invoice
    # Adds a line.
    def add(line)
      @lines << line
    end

    def self.build
      new
    end
  end
end
""",
    "template.ts": """\
namespace Shapes {
  /** Area. */
  export function area(r: number): number {
    const doc = `
function notReal() {
}
`;
    return r * r;
  }
}

export class Box {
  constructor(private side: number) {}

  /** Volume. */
  volume(): number {
    return this.side ** 3;
  }
}
""",
}


def whole(source: str, path: str, line: int) -> Definition | None:
    language = language_of(path, source)
    assert language is not None
    digest = hashlib.sha256(source.encode()).hexdigest()
    return definition_at(Trees().parse(path, digest, language, source), path, line)


def from_excerpt(source: str, path: str, line: int) -> Definition | None:
    language = language_of(path, source)
    assert language is not None
    parsed = parse_excerpt(language, source, line)
    return None if parsed is None else definition_in_excerpt(parsed, path, line)


def compare_every_line(source: str, path: str) -> tuple[int, int]:
    """Lines with a definition, and how many of them an excerpt answered."""
    defined = answered = 0
    for line in range(source.count("\n") + 1):
        expected = whole(source, path, line)
        found = from_excerpt(source, path, line)
        defined += expected is not None
        if found is not None:
            assert found == expected, f"{path}:{line + 1}"
            answered += 1
    return defined, answered


UNINDENTED = {"matrix.cpp"}
"""Fixtures whose definitions sit in a namespace that does not indent them:
indentation cannot find its opener, the brace count says so, every line is
parsed whole."""


@pytest.mark.parametrize("name", CODE)
def test_an_excerpt_names_what_the_whole_file_names(name: str) -> None:
    defined, answered = compare_every_line((FIXTURES / name).read_text(encoding="utf-8"), name)
    if name in UNINDENTED:
        assert answered == 0
    else:
        assert answered >= defined // 2, (name, defined, answered)


@pytest.mark.parametrize("name", sorted(MISLEADING))
def test_indentation_that_misleads_never_changes_the_answer(name: str) -> None:
    compare_every_line(MISLEADING[name], name)


def test_a_method_under_a_multi_line_class_header_comes_from_an_excerpt() -> None:
    source = MISLEADING["Header.java"]
    found = from_excerpt(source, "Header.java", 11)  # System.out.println("a")
    assert found is not None and found.name == "Header.run"
    assert found.doc == "Runs." and found.decorators == ("@Override",)
    deep = from_excerpt(source, "Header.java", 21)
    assert deep is not None and deep.name == "Header.Inner.deep"


def test_a_string_with_code_at_column_zero_is_not_taken_for_definitions() -> None:
    source = MISLEADING["strings.py"]
    for line in (6, 9):  # "def fake():", "class Fake:" inside the string
        expected = whole(source, "strings.py", line)
        assert expected is not None and expected.name == "usage"
        assert from_excerpt(source, "strings.py", line) in (None, expected)


def test_a_10000_line_file_is_parsed_one_function_deep() -> None:
    body = "".join(
        f'def f{n}(a: int) -> int:\n    """Function {n}."""\n    return a + {n}\n\n\n'
        for n in range(2000)
    )
    language = language_of("big.py", body)
    assert language is not None
    parsed = parse_excerpt(language, body, 5002)
    assert parsed is not None and parsed.block is not None
    first, past = parsed.block
    assert past - first < 10  # one function (and its blank lines), not the file
    found = definition_in_excerpt(parsed, "big.py", 5002)
    assert found == whole(body, "big.py", 5002)
    assert found is not None and found.name == "f1000" and found.doc == "Function 1000."


def test_a_block_over_the_budget_is_not_excerpted() -> None:
    lines = "".join(f"    x{n} = {n}\n" for n in range(BLOCK_BUDGET // 10))
    source = f"def huge():\n{lines}    return 0\n"
    language = language_of("huge.py", source)
    assert language is not None
    parsed = parse_excerpt(language, source, 100)
    assert parsed is None or definition_in_excerpt(parsed, "huge.py", 100) is None


def test_blank_lines_and_data_files_are_not_excerpted() -> None:
    python = language_of("a.py", "")
    yaml = language_of("a.yaml", "")
    assert python is not None and yaml is not None
    assert parse_excerpt(python, "def f():\n\n    pass\n", 1) is None
    parsed = parse_excerpt(yaml, "a:\n  b: 1\n", 1)
    assert parsed is None or definition_in_excerpt(parsed, "a.yaml", 1) is None
