"""Entity summaries from ``ast``: nesting, methods, decorators, syntax errors."""

from __future__ import annotations

import pytest

from acp_backend.inspect.entities import Outline, Unparsable, is_python, module_name
from acp_client.models import EntityKind

SOURCE = '''\
"""Module docstring."""
import functools


def outer(a: int, *args: str, b=1, **kw) -> list[int]:
    """Outer does things.

    More words.
    """

    def inner(x):
        return x

    return [inner(a)]


class Shelf(Base, metaclass=Meta):
    """

    A shelf of things.
    """

    size = 3

    @property
    @functools.cache
    def count(self) -> int:
        return self.size

    async def fetch(self, *, limit: int = 10):
        class Local:
            def method(self):
                pass

        return Local


if True:
    def conditional():
        pass
'''


def entity_at(line: int, source: str = SOURCE, module: str = "pkg.mod") -> dict[str, object]:
    found = Outline(source, "pkg/mod.py").at(line)
    assert found is not None, f"nothing encloses line {line}"
    return found.entity(module).model_dump(mode="json")


def test_a_function_its_signature_and_the_first_line_of_its_docstring() -> None:
    entity = entity_at(6)
    assert entity["id"] == "py:function/pkg.mod.outer"
    assert entity["signature"] == "def outer(a: int, *args: str, b=1, **kw) -> list[int]"
    assert entity["doc"] == "Outer does things."
    assert entity["location"] == {
        "path": "pkg/mod.py",
        "line": 4,
        "character": 0,
        "end_line": 13,
        "end_character": 21,
    }


def test_a_nested_function_is_the_innermost_and_named_through_its_parent() -> None:
    entity = entity_at(11)
    assert entity["id"] == "py:function/pkg.mod.outer.inner"
    assert entity["name"] == "outer.inner" and entity["signature"] == "def inner(x)"
    assert entity["doc"] == ""
    # Back in the outer body after the nested def.
    assert entity_at(13)["id"] == "py:function/pkg.mod.outer"


def test_a_class_with_bases_and_keywords_and_a_docstring_after_blank_lines() -> None:
    entity = entity_at(22)  # ``size = 3`` in the class body
    assert entity["id"] == "py:class/pkg.mod.Shelf"
    assert entity["kind"] == EntityKind.CLASS
    assert entity["signature"] == "class Shelf(Base, metaclass=Meta)"
    assert entity["doc"] == "A shelf of things."


def test_a_decorated_method_spans_its_decorators() -> None:
    for line in (24, 25, 26, 27):  # @property, @functools.cache, def, body
        entity = entity_at(line)
        assert entity["id"] == "py:method/pkg.mod.Shelf.count", line
    entity = entity_at(24)
    assert entity["decorators"] == ["@property", "@functools.cache"]
    assert entity["location"]["line"] == 24 and entity["location"]["character"] == 4


def test_async_methods_classes_inside_them_and_their_methods() -> None:
    assert entity_at(29)["signature"] == "async def fetch(self, *, limit: int=10)"
    assert entity_at(29)["kind"] == EntityKind.METHOD
    assert entity_at(30)["id"] == "py:class/pkg.mod.Shelf.fetch.Local"
    assert entity_at(32)["id"] == "py:method/pkg.mod.Shelf.fetch.Local.method"


def test_definitions_under_an_if_belong_to_the_module_scope() -> None:
    assert entity_at(39)["id"] == "py:function/pkg.mod.conditional"


def test_module_level_lines_have_no_entity() -> None:
    outline = Outline(SOURCE, "pkg/mod.py")
    for line in (0, 1, 2, 14, 15, 35, 37, 999):
        assert outline.at(line) is None, line


def test_columns_are_code_points_after_non_ascii_text() -> None:
    source = 'x = "👋你好"; y = 1\nif x:  # 🌍\n    def f():  # 你好\n        pass\n'
    found = Outline(source, "m.py").at(3)
    assert found is not None and found.location.character == 4
    assert found.location.end_line == 3 and found.location.end_character == 12


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def broken(:\n    pass\n", "m.py does not parse (line 1)"),
        ("x = 1\nclass C:\n  def f(self)\n", "m.py does not parse (line 3)"),
        ("x = 'a\0b'\n", "m.py"),
        ("x = " + "(" * 10_000 + ")" * 10_000 + "\n", "m.py"),
    ],
)
def test_text_that_does_not_parse_says_where_instead_of_failing(source: str, expected: str) -> None:
    with pytest.raises(Unparsable) as caught:
        Outline(source, "m.py")
    assert str(caught.value).startswith(expected)


def test_module_names_follow_the_packages_on_disk() -> None:
    packages = {"src/pkg", "src/pkg/sub"}
    is_package = packages.__contains__
    assert module_name("src/pkg/sub/mod.py", "root", is_package) == "pkg.sub.mod"
    assert module_name("src/pkg/__init__.py", "root", is_package) == "pkg"
    assert module_name("greetings.py", "demo", is_package) == "greetings"
    assert module_name("tools/find_todos.py", "demo", is_package) == "find_todos"
    assert module_name("__init__.py", "demo", is_package) == "demo"
    assert module_name("stubs/x.pyi", "demo", is_package) == "x"


def test_only_python_files_are_summarised() -> None:
    assert is_python("a/b.py") and is_python("b.pyi")
    assert not is_python("b.pyc") and not is_python("README.md")
