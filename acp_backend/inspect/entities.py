"""Entity summary: the innermost Python definition enclosing a line, via ``ast``.

A definition spans its decorators through its last line. Its stable id is
``py:<kind>/<module>.<qualified name>``, the module being the file's import
name (its enclosing packages are the directories that hold an
``__init__.py``). A nested function's qualified name is ``outer.inner``; a
``def`` directly in a class body is a method. Other languages have none.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from acp_client.models import Entity, EntityKind, Location
from acp_client.text import split_lines

PYTHON_SUFFIXES = (".py", ".pyi")

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True)
class Definition:
    """One definition, summarised, in contract terms except for its module."""

    kind: EntityKind
    name: str  # qualified within the module
    signature: str
    doc: str
    decorators: tuple[str, ...]
    location: Location

    def entity(self, module: str) -> Entity:
        return Entity(
            id=f"py:{self.kind}/{module}.{self.name}",
            kind=self.kind,
            name=self.name,
            signature=self.signature,
            doc=self.doc,
            decorators=self.decorators,
            location=self.location,
        )


@dataclass(frozen=True, slots=True)
class Span:
    """Where a definition is (0-based lines, decorators included); summarised on demand."""

    node: _Definition
    name: str
    in_class: bool
    depth: int
    first: int
    last: int


class Unparsable(Exception):
    """The text is not Python this interpreter can parse; the message says where."""


def is_python(path: str) -> bool:
    return path.endswith(PYTHON_SUFFIXES)


class Outline:
    """The classes and functions of one module. Parsing is the cost; only the
    definition asked about is summarised (``ast.unparse`` is slow)."""

    def __init__(self, text: str, path: str) -> None:
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError as exc:
            where = f" (line {exc.lineno})" if exc.lineno else ""
            raise Unparsable(f"{path} does not parse{where}: {exc.msg}") from None
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            raise Unparsable(f"{path} cannot be parsed: {type(exc).__name__}") from None
        self.path = path
        self.lines = split_lines(text)  # Python's own breaks; str.splitlines knows more
        self.spans = list(_scope(tree, "", in_class=False, depth=0))

    def at(self, line: int) -> Definition | None:
        """The innermost definition whose lines include ``line``."""
        inside = [span for span in self.spans if span.first <= line <= span.last]
        span = max(inside, key=lambda found: found.depth, default=None)
        return None if span is None else self.describe(span)

    def describe(self, span: Span) -> Definition:
        node = span.node
        if isinstance(node, ast.ClassDef):
            kind = EntityKind.CLASS
            bases = [ast.unparse(base) for base in node.bases]
            bases += [ast.unparse(keyword) for keyword in node.keywords]
            signature = f"class {node.name}({', '.join(bases)})" if bases else f"class {node.name}"
        else:
            kind = EntityKind.METHOD if span.in_class else EntityKind.FUNCTION
            keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            signature = f"{keyword} {node.name}({ast.unparse(node.args)}){returns}"
        docstring = ast.get_docstring(node) or ""
        return Definition(
            kind=kind,
            name=span.name,
            signature=signature,
            doc=next((line.strip() for line in docstring.splitlines() if line.strip()), ""),
            decorators=tuple(f"@{ast.unparse(decorator)}" for decorator in node.decorator_list),
            location=Location(
                path=self.path,
                line=span.first,
                # Decorators share the definition's indentation.
                character=self.code_points(span.first, node.col_offset),
                end_line=span.last,
                end_character=self.code_points(span.last, node.end_col_offset or 0),
            ),
        )

    def code_points(self, line: int, utf8_offset: int) -> int:
        """``ast`` counts UTF-8 bytes into a line; the contract counts code points."""
        text = self.lines[line] if line < len(self.lines) else ""
        return len(text.encode("utf-8")[:utf8_offset].decode("utf-8", "ignore"))


def _scope(node: ast.AST, prefix: str, *, in_class: bool, depth: int) -> Iterator[Span]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _Definition):
            first = min([child.lineno, *(decorator.lineno for decorator in child.decorator_list)])
            name = prefix + child.name
            last = (child.end_lineno or child.lineno) - 1
            yield Span(child, name, in_class, depth, first - 1, last)
            yield from _scope(
                child, name + ".", in_class=isinstance(child, ast.ClassDef), depth=depth + 1
            )
        elif isinstance(child, ast.stmt):
            # Definitions under if/try/with/for belong to the same scope.
            yield from _scope(child, prefix, in_class=in_class, depth=depth)


def module_name(path: str, root_name: str, is_package: Callable[[str], bool]) -> str:
    """The import name of ``path`` (relative to a root named ``root_name``):
    its stem behind every enclosing directory that ``is_package``."""
    directory, filename = posixpath.split(path)
    stem = filename.rsplit(".", 1)[0]
    parts = [] if stem == "__init__" else [stem]
    while directory and is_package(directory):
        directory, package = posixpath.split(directory)
        parts.insert(0, package)
    return ".".join(parts) or root_name
