"""Entity summaries from tree-sitter, per language, on small real-world files
(``tests/fixtures/inspect``): name, kind, signature, doc and span; key paths
in data files; nesting, decorators, syntax errors, code-point columns."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from acp_backend.inspect.entities import (
    Definition,
    definition_at,
    first_error_line,
    module_name,
)
from acp_backend.inspect.languages import language_of
from acp_backend.inspect.syntax import Trees
from acp_client.models import EntityKind

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "inspect"
K = EntityKind


def definition(source: str, path: str, line: int) -> Definition | None:
    language = language_of(path, source)
    assert language is not None, path
    digest = hashlib.sha256(source.encode()).hexdigest()
    return definition_at(Trees().parse(path, digest, language, source), path, line)


def at(name: str, line: int) -> Definition:
    """The definition at 1-based ``line`` of the fixture ``name`` (as an editor numbers it)."""
    found = definition((FIXTURES / name).read_text(encoding="utf-8"), name, line - 1)
    assert found is not None, f"nothing encloses {name}:{line}"
    return found


def span(found: Definition) -> tuple[int, int, int | None, int | None]:
    """1-based first and last lines, 0-based code-point columns."""
    where = found.location
    last = where.end_line + 1 if where.end_line is not None else None
    return where.line + 1, where.character, last, where.end_character


def summary(found: Definition) -> tuple[str, str, str, str]:
    return found.kind.value, found.name, found.signature, found.doc


# --- Python ----------------------------------------------------------------


def test_python_functions_nested_functions_and_docstrings() -> None:
    restock = at("inventory.py", 21)  # shelf.count = clamp(...)
    assert summary(restock) == (
        "function",
        "restock",
        'def restock(shelf: Shelf, amount: int = 1, *, reason: str = "") -> int',
        "Add ``amount`` items to ``shelf``.",
    )
    assert span(restock) == (12, 0, 23, 22)
    assert restock.entity("inventory.py", "inventory").id == "py:function/inventory.restock"
    clamp = at("inventory.py", 20)
    assert summary(clamp) == ("function", "restock.clamp", "def clamp(value: int) -> int", "")
    assert span(clamp) == (18, 4, 20, 37)
    assert at("inventory.py", 19).name == "restock.clamp"  # its comment line
    assert at("inventory.py", 22).name == "restock"  # back in the outer body


def test_python_classes_decorated_methods_and_multiline_signatures() -> None:
    shelf = at("inventory.py", 31)  # count: int = 0
    assert summary(shelf) == ("class", "Shelf", "class Shelf", "A shelf of things.")
    assert shelf.decorators == ("@dataclass",) and span(shelf) == (26, 0, 47, 34)
    for line in (33, 34, 35, 36):  # @property, @functools.cache, def, body
        assert at("inventory.py", line).name == "Shelf.empty", line
    empty = at("inventory.py", 33)
    assert empty.kind is K.METHOD and empty.signature == "def empty(self) -> bool"
    assert empty.decorators == ("@property", "@functools.cache")
    assert span(empty) == (33, 4, 36, 30)
    fetch = at("inventory.py", 40)  # inside the parameter list, past a comment
    assert fetch.kind is K.METHOD
    assert fetch.signature == "async def fetch(self, *, limit: int = 10) -> list[str]"
    assert at("inventory.py", 43).name == "Shelf.fetch.Page"
    first = at("inventory.py", 45)
    assert (first.kind, first.name) == (K.METHOD, "Shelf.fetch.Page.first")


def test_python_module_level_lines_have_no_entity() -> None:
    source = (FIXTURES / "inventory.py").read_text()
    for line in (0, 1, 4, 8, 10, 24, 47, 999):
        assert definition(source, "inventory.py", line) is None, line


def test_python_definitions_under_an_if_belong_to_the_module() -> None:
    source = "if True:\n    def conditional():\n        pass\n"
    found = definition(source, "m.py", 2)
    assert found is not None and found.entity("m.py", "m").id == "py:function/m.conditional"


def test_python_columns_are_code_points_after_non_ascii_text() -> None:
    source = 'x = "👋你好"; y = 1\nif x:  # 🌍\n    def f():  # 你好\n        pass\n'
    found = definition(source, "m.py", 3)
    assert found is not None and found.location.character == 4
    assert found.location.end_line == 3 and found.location.end_character == 12


def test_python_class_bases_and_a_docstring_after_blank_lines() -> None:
    source = 'class Shelf(Base, metaclass=Meta):\n    """\n\n    A shelf.\n    """\n\n    x = 1\n'
    found = definition(source, "m.py", 6)
    assert found is not None
    assert (found.signature, found.doc) == ("class Shelf(Base, metaclass=Meta)", "A shelf.")


# --- JavaScript, TypeScript, TSX --------------------------------------------


def test_javascript_functions_arrows_classes_and_jsdoc() -> None:
    total = at("cart.js", 14)  # inside the for loop
    assert summary(total) == (
        "function",
        "total",
        "function total(items)",
        "Adds up the prices of the items.",
    )
    assert span(total) == (11, 0, 17, 1)
    assert total.entity("src/cart.js").id == "js:function/src/cart.js#total"
    fmt = at("cart.js", 21)
    assert summary(fmt) == (
        "function",
        "format",
        "const format = (amount, currency = 'EUR') =>",
        "Formats an amount of money.",
    )
    assert span(fmt) == (20, 0, 22, 2)
    assert at("cart.js", 24).name == "Cart" and at("cart.js", 24).kind is K.CLASS
    constructor = at("cart.js", 27)
    assert summary(constructor) == (
        "method",
        "Cart.constructor",
        "constructor(owner)",
        "A cart for one customer.",
    )
    add = at("cart.js", 33)
    assert summary(add) == ("method", "Cart.add", "add(item)", "Adds one item; returns the cart.")
    assert span(add) == (32, 2, 35, 3)
    assert at("cart.js", 38).signature == "get size()"
    assert definition((FIXTURES / "cart.js").read_text(), "cart.js", 40) is None  # exports


def test_typescript_interfaces_types_enums_generics_and_namespaces() -> None:
    entity = at("store.ts", 5)
    assert summary(entity) == (
        "interface",
        "Entity",
        "export interface Entity",
        "Something with an id.",
    )
    assert span(entity) == (4, 0, 7, 1)
    assert summary(at("store.ts", 9))[:3] == ("type", "Id", "type Id = string")
    assert at("store.ts", 12).kind is K.ENUM
    put = at("store.ts", 24)
    assert summary(put) == (
        "method",
        "Store.put",
        "put(item: T): void",
        "Puts an entity, replacing one with the same id.",
    )
    store = at("store.ts", 21)
    assert (store.kind, store.signature) == (K.CLASS, "export class Store<T extends Entity>")
    assert store.doc == "Keeps entities by id."
    join = at("store.ts", 35)
    assert summary(join) == (
        "function",
        "Util.join",
        'export function join(ids: Id[], separator = ","): string',
        "Joins ids.",
    )
    assert at("store.ts", 32).kind is K.MODULE
    load = at("store.ts", 41)
    assert load.signature == (
        "export async function load<T extends Entity>(url: string): Promise<T[]>"
    )
    assert load.entity("store.ts").id == "ts:function/store.ts#load"


def test_tsx_components() -> None:
    badge = at("badge.tsx", 9)  # inside the JSX
    assert summary(badge) == (
        "function",
        "Badge",
        "export function Badge({ label, count }: BadgeProps): JSX.Element",
        "A count next to a label.",
    )
    assert span(badge) == (6, 0, 13, 1)
    row = at("badge.tsx", 16)
    assert row.signature == "export const Row = ({ children }: { children: React.ReactNode }) =>"
    assert row.language == "tsx"


# --- Go, Rust, Java ----------------------------------------------------------


def test_go_functions_methods_structs_and_interfaces() -> None:
    new = at("server.go", 23)
    assert summary(new) == (
        "function",
        "New",
        "func New(addr string) *Server",
        "New returns a server listening on addr.",
    )
    assert span(new) == (22, 0, 24, 1)
    health = at("server.go", 30)  # inside a closure: still the method
    assert summary(health) == (
        "method",
        "Server.Health",
        "func (s *Server) Health(w http.ResponseWriter, r *http.Request)",
        'Health answers "ok" and counts the request.',
    )
    assert span(health) == (27, 0, 34, 1)
    server = at("server.go", 13)  # a field's comment
    assert summary(server) == (
        "struct",
        "Server",
        "type Server struct",
        "Server holds the listener's settings.",
    )
    assert at("server.go", 17).kind is K.INTERFACE
    serve = at("server.go", 18)
    assert (serve.kind, serve.name) == (K.METHOD, "Handler.Serve")


def test_rust_items_impls_traits_attributes_and_doc_comments() -> None:
    point = at("shapes.rs", 8)
    assert summary(point) == ("struct", "Point", "pub struct Point", "A point in the plane.")
    assert point.decorators == ("#[derive(Debug, Clone, Copy)]",)
    assert span(point) == (6, 0, 10, 1)  # from its attribute
    assert at("shapes.rs", 6).name == "Point"  # on the attribute itself
    trait_fn = at("shapes.rs", 15)
    assert summary(trait_fn) == (
        "method",
        "Area::area",
        "fn area(&self) -> f64",
        "The area, in square units.",
    )
    area = at("shapes.rs", 26)
    assert (area.kind, area.name, area.signature) == (
        K.METHOD,
        "Shape::area",
        "fn area(&self) -> f64",
    )
    assert span(area) == (24, 4, 29, 5)
    impl = at("shapes.rs", 23)
    assert (impl.kind, impl.name, impl.signature) == (K.IMPL, "Shape", "impl Area for Shape")
    fmt = at("shapes.rs", 35)
    assert fmt.name == "Point::fmt" and fmt.doc == "Writes `(x, y)`."
    test = at("shapes.rs", 44)
    assert (test.kind, test.name, test.decorators) == (
        K.FUNCTION,
        "tests::square_area",
        ("#[test]",),
    )
    assert at("shapes.rs", 40).kind is K.MODULE
    assert at("shapes.rs", 19).kind is K.ENUM


def test_java_classes_methods_constructors_and_annotations() -> None:
    record = at("Ledger.java", 22)
    assert summary(record) == (
        "method",
        "Ledger.record",
        "public void record(long cents)",
        "Records a payment.",
    )
    assert record.decorators == ("@Deprecated",) and span(record) == (20, 4, 23, 5)
    assert at("Ledger.java", 20).name == "Ledger.record"  # the annotation's line
    constructor = at("Ledger.java", 13)
    assert summary(constructor) == (
        "method",
        "Ledger.Ledger",
        "public Ledger()",
        "Creates an empty ledger.",
    )
    ledger = at("Ledger.java", 10)
    assert summary(ledger) == ("class", "Ledger", "public class Ledger", "A ledger of payments.")
    assert at("Ledger.java", 29).signature == "public long balance()"
    query = at("Ledger.java", 35)
    assert (query.kind, query.name) == (K.METHOD, "Ledger.Query.run")
    assert at("Ledger.java", 34).kind is K.INTERFACE
    assert at("Ledger.java", 38).name == "Ledger.Currency"


# --- C, C++ ------------------------------------------------------------------


def test_c_functions_and_structs() -> None:
    reserve = at("buffer.c", 22)
    assert summary(reserve) == (
        "function",
        "buffer_reserve",
        "static int buffer_reserve(struct buffer *b, size_t extra)",
        "Makes room for `extra` more bytes.",
    )
    assert span(reserve) == (16, 0, 29, 1)
    append = at("buffer.c", 35)
    assert append.doc == "Appends `n` bytes." and append.name == "buffer_append"
    buffer = at("buffer.c", 8)
    assert summary(buffer) == (
        "struct",
        "buffer",
        "struct buffer",
        "The buffer: bytes and how many are used.",
    )


def test_cpp_namespaces_classes_members_and_templates() -> None:
    at_ = at("matrix.cpp", 13)
    assert summary(at_) == (
        "method",
        "linalg::Matrix::at",
        "double at(int r, int c) const",
        "The element at (r, c).",
    )
    transpose = at("matrix.cpp", 28)  # nested loops
    assert summary(transpose) == (
        "method",
        "linalg::Matrix::transpose",
        "Matrix Matrix::transpose() const",
        "Swaps rows and columns.",
    )
    assert span(transpose) == (24, 0, 32, 1)
    square = at("matrix.cpp", 36)
    assert summary(square) == (
        "function",
        "linalg::square",
        "template <typename T> T square(T x)",
        "",
    )
    assert span(square) == (34, 0, 37, 1)  # from ``template``
    assert at("matrix.cpp", 19).name == "linalg::Matrix"
    assert at("matrix.cpp", 5).kind is K.MODULE


# --- Ruby, Bash --------------------------------------------------------------


def test_ruby_modules_classes_and_methods() -> None:
    add = at("billing.rb", 16)
    assert summary(add) == (
        "method",
        "Billing::Invoice#add",
        "def add(description, cents)",
        "Adds a line; returns the invoice.",
    )
    assert span(add) == (15, 4, 18, 7)
    total = at("billing.rb", 22)
    assert summary(total) == (
        "method",
        "Billing::Invoice#total",
        "def total",
        "The total, in cents.",
    )
    empty = at("billing.rb", 26)
    assert (empty.name, empty.signature) == ("Billing::Invoice.empty", "def self.empty(customer)")
    invoice = at("billing.rb", 8)
    assert summary(invoice) == (
        "class",
        "Billing::Invoice",
        "class Invoice",
        "An invoice with lines.",
    )
    assert at("billing.rb", 4).doc == "Billing for subscriptions."
    assert at("billing.rb", 4).entity("lib/billing.rb").id == "rb:module/lib/billing.rb#Billing"


def test_bash_functions_both_ways() -> None:
    log = at("deploy.sh", 9)
    assert summary(log) == ("function", "log", "log()", "Prints a message with a timestamp.")
    assert span(log) == (8, 0, 10, 1)
    deploy = at("deploy.sh", 18)  # inside an if
    assert summary(deploy) == (
        "function",
        "deploy",
        "function deploy",
        "Copies the build and restarts the service.",
    )
    assert span(deploy) == (13, 0, 21, 1)
    assert deploy.entity("deploy.sh").id == "sh:function/deploy.sh#deploy"
    source = (FIXTURES / "deploy.sh").read_text()
    assert definition(source, "deploy.sh", 22) is None  # the top-level call


# --- YAML, TOML, JSON ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "path"),
    [
        ("ci.yaml", 2, "name"),
        ("ci.yaml", 5, "on.push.branches"),
        ("ci.yaml", 7, "jobs.test"),
        ("ci.yaml", 10, "jobs.test.steps[0].uses"),
        ("ci.yaml", 12, "jobs.test.steps[1].uses"),
        ("ci.yaml", 14, "jobs.test.steps[1].with.python-version"),
        ("ci.yaml", 16, "jobs.test.steps[2].run"),
        ("ci.yaml", 18, "jobs.test.steps[2].run"),  # inside the block scalar
        ("pyproject.toml", 2, "project"),
        ("pyproject.toml", 6, "project.dependencies[0]"),
        ("pyproject.toml", 11, "project.optional-dependencies.test"),
        ("pyproject.toml", 15, "tool.ruff.lint.per-file-ignores"),
        ("pyproject.toml", 17, "tool.shop.shelves[0]"),
        ("pyproject.toml", 22, "tool.shop.shelves[1].name"),
        ("package.json", 5, "scripts.test"),
        ("package.json", 9, "files[0]"),
        ("package.json", 10, "files[1]"),
    ],
)
def test_key_paths_in_data_files(name: str, line: int, path: str) -> None:
    found = at(name, line)
    assert (found.kind, found.name, found.key_path, found.signature) == (K.KEY, path, path, "")


def test_key_paths_quote_keys_that_are_not_plain_words() -> None:
    source = '{"a.b": {"x y": [\n  1,\n  {\n    "ok": true\n  }\n]}}\n'
    found = definition(source, "k.json", 3)
    assert found is not None and found.key_path == '["a.b"]["x y"][1].ok'
    found = definition("# top\n'a b':\n  c: 1  # trailing\n", "k.yaml", 2)
    assert found is not None and found.key_path == '["a b"].c'
    assert definition("# only a comment\n", "k.yaml", 0) is None
    yaml = at("ci.yaml", 8)
    assert yaml.location.line == 7 and yaml.entity("ci.yaml").id == (
        "yaml:key/ci.yaml#jobs.test.runs-on"
    )


# --- every language -------------------------------------------------------------


def test_a_syntax_error_mid_file_still_yields_the_enclosing_definition() -> None:
    source = (FIXTURES / "cart.js").read_text().replace("sum += item.price;", "sum += (;")
    found = definition(source, "cart.js", 13)
    assert found is not None and found.name == "total"
    python = (
        "def ok():\n    return 1\n\ndef broken(:\n    x = 1\n    return x\n\n\n"
        "def after():\n    pass\n"
    )
    after = definition(python, "m.py", 9)
    assert after is not None and after.name == "after"
    language = language_of("m.py")
    assert language is not None
    parsed = Trees().parse("m.py", "x", language, python)
    assert first_error_line(parsed) == 3


def test_lines_past_the_end_and_blank_files_have_none() -> None:
    assert definition("", "e.py", 0) is None
    assert definition("def f():\n    pass\n", "m.py", 50) is None
    assert definition("\n\n\n", "e.go", 1) is None


def test_a_minified_line_gives_a_short_signature() -> None:
    body = ";".join(f"a{n}=1" for n in range(20_000))
    source = "function f(" + ",".join(f"p{n}" for n in range(500)) + "){" + body + "}\n"
    found = definition(source, "min.js", 0)
    assert found is not None and found.name == "f"
    assert len(found.signature) <= 300 and found.signature.endswith("…")


@pytest.mark.parametrize(
    ("path", "head", "language"),
    [
        ("a/b.py", "", "python"),
        ("b.pyi", "", "python"),
        ("x.mjs", "", "javascript"),
        ("x.tsx", "", "tsx"),
        ("x.hpp", "", "cpp"),
        ("Gemfile", "", "ruby"),
        ("Cargo.lock", "", "toml"),
        ("x.yml", "", "yaml"),
        ("bin/deploy", "#!/usr/bin/env bash\n", "bash"),
        ("bin/tool", "#!/usr/bin/python3.12 -u\n", "python"),
        ("bin/serve", "#!/usr/bin/env -S node --no-warnings\n", "javascript"),
        ("bin/ruby-thing", "#! /usr/local/bin/ruby\n", "ruby"),
        ("run.sh", "#!/usr/bin/env python3\n", "bash"),  # the name wins
    ],
)
def test_the_language_comes_from_the_name_then_a_shebang(
    path: str, head: str, language: str
) -> None:
    found = language_of(path, head + "x = 1\n")
    assert found is not None and found.name == language


def test_unknown_languages_have_none() -> None:
    for path, head in (("README.md", ""), ("blob.bin", ""), ("bin/x", "#!/usr/bin/env perl\n")):
        assert language_of(path, head) is None, path
    assert language_of("notes", None) is None


def test_module_names_follow_the_packages_on_disk() -> None:
    packages = {"src/pkg", "src/pkg/sub"}
    is_package = packages.__contains__
    assert module_name("src/pkg/sub/mod.py", "root", is_package) == "pkg.sub.mod"
    assert module_name("src/pkg/__init__.py", "root", is_package) == "pkg"
    assert module_name("greetings.py", "demo", is_package) == "greetings"
    assert module_name("tools/find_todos.py", "demo", is_package) == "find_todos"
    assert module_name("__init__.py", "demo", is_package) == "demo"
    assert module_name("stubs/x.pyi", "demo", is_package) == "x"
