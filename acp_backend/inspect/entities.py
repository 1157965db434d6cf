"""Entity summary: the innermost definition enclosing a line, from a tree-sitter tree.

One code path for every language of ``languages``. The line's first
non-blank character (a blank line: its start) is looked up in the tree and
its ancestors are walked outwards; the first that is a definition of the
language (``Rule``) is the entity, the others qualify its name (``outer.inner``,
``Class.method``, ``Shape::area``, ``Billing::Invoice#add``). A definition
spans its decorators (Python), its ``export`` / ``template`` wrapper and its
attributes (Rust) through its last line; a function directly in a class-like
body is a method. Its signature is its header as written on one line
(comments and decorators out), its doc the first line of its docstring
(Python) or of the comments right above it. tree-sitter recovers from syntax
errors, so a file being typed still has its enclosing definitions.

In a data file (YAML, TOML, JSON) the entity is the key path to the line's
last value: ``jobs.test.steps[2].run``.

Python ids keep the import-name form ``py:<kind>/<module>.<qualified name>``
(the module being the file's import name: its enclosing packages are the
directories that hold an ``__init__.py``); other ids are
``<prefix>:<kind>/<path>#<qualified name>``.
"""

from __future__ import annotations

import inspect
import json
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tree_sitter import Node, Point

from acp_backend.inspect.languages import Language, Rule
from acp_backend.inspect.syntax import Parsed
from acp_client.models import Entity, EntityKind, Location

MAX_SIGNATURE = 300
"""Characters of a signature (a minified file's header can be a whole line)."""
MAX_DOC = 300
_HEADER_BYTES = 4000
"""Bytes of a header looked at for its signature."""
_DOC_COMMENTS = 40
_BLANK = b" \t\f\v"
_COMMENT_MARK = re.compile(r"^(?://[/!]?|#+!?|--|\*+(?!/))\s?")
_SPACE = re.compile(r"\s+")
_OPEN_SPACE = re.compile(r"([(\[]) ")
_SPACE_CLOSE = re.compile(r" ([)\]])")
_TRAILING_COMMA = re.compile(r",\s*([)\]])")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")
_NAME_TYPES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "template_function",
        "type_identifier",
    }
)
_SEQUENCES = frozenset({"array", "flow_sequence"})
_PAIRS = frozenset({"pair", "block_mapping_pair", "flow_pair"})


@dataclass(frozen=True)
class Definition:
    """One definition, summarised, in contract terms except for its id."""

    kind: EntityKind
    name: str  # qualified within the file (the key path in a data file)
    signature: str
    doc: str
    decorators: tuple[str, ...]
    location: Location
    language: str
    prefix: str
    key_path: str | None = None

    def entity(self, path: str, module: str | None = None) -> Entity:
        """As the contract says it; ``module`` (Python) names it by import name."""
        if module is not None and self.prefix == "py":
            stable = f"py:{self.kind}/{module}.{self.name}"
        else:
            stable = f"{self.prefix}:{self.kind}/{path}#{self.name}"
        return Entity(
            id=stable,
            kind=self.kind,
            name=self.name,
            signature=self.signature,
            doc=self.doc,
            decorators=self.decorators,
            location=self.location,
            language=self.language,
            key_path=self.key_path,
        )


def definition_at(parsed: Parsed, path: str, line: int) -> Definition | None:
    """The innermost definition (or, in a data file, key) enclosing ``line``."""
    if line >= parsed.lines:
        return None
    if parsed.language.data:
        return _Keys(parsed, path).at(line)
    return _Code(parsed, path).at(line)


def definition_in_excerpt(parsed: Parsed, path: str, line: int) -> Definition | None:
    """``definition_at`` on an excerpt (``syntax.parse_excerpt``), when the
    definition lies inside the block the excerpt parsed whole: only there
    are its span, doc and decorators all in the tree. None otherwise (the
    whole file must be parsed, not that there is no definition)."""
    if parsed.block is None or parsed.language.data:
        return None
    found = definition_at(parsed, path, line)
    if found is None:
        return None
    first, past = parsed.block
    where = found.location
    end = where.end_line if where.end_line is not None else where.line
    return found if first <= where.line <= end < past else None


def first_error_line(parsed: Parsed) -> int | None:
    """The line of the first syntax error, or None when the tree has none."""
    node = parsed.tree.root_node
    if not node.has_error:
        return None
    while True:
        if node.is_error or node.is_missing:
            return node.start_point.row
        child = next((c for c in node.children if c.has_error or c.is_missing), None)
        if child is None:
            return node.start_point.row
        node = child


class _Lookup:
    def __init__(self, parsed: Parsed, path: str) -> None:
        self.parsed = parsed
        self.language: Language = parsed.language
        self.path = path

    def node_at(self, line: int, last: bool) -> Node | None:
        """The smallest node at the line's first (or ``last``) non-blank byte."""
        text = self.parsed.line(line)
        content = text.strip(_BLANK)
        if last:  # a value's last character; a separator after it is not it
            content = text.rstrip(_BLANK).rstrip(b",;").rstrip(_BLANK)
            if not content.strip(_BLANK):
                return None
            column = len(content) - 1
        else:
            column = len(text) - len(text.lstrip(_BLANK)) if content else 0
        point = Point(line, column)
        return self.parsed.tree.root_node.descendant_for_point_range(point, point)

    def location(self, first: Node, last: Node) -> Location:
        start, end = first.start_point, last.end_point
        if end.column == 0 and end.row > start.row:  # ends with its line break
            row = end.row - 1
            while row > start.row and not self.parsed.line(row).strip(_BLANK):
                row -= 1  # and blank lines (a TOML table's)
            end = Point(row, len(self.parsed.line(row)))
        return Location(
            path=self.path,
            line=start.row,
            character=self.parsed.code_points(start),
            end_line=end.row,
            end_character=self.parsed.code_points(end),
        )

    def doc_comments(self, node: Node) -> str:
        """The first line of the comments right above ``node`` (no blank line
        between), each starting its own line."""
        comments: list[str] = []
        below = node
        sibling = _previous(node)
        while sibling is not None and len(comments) < _DOC_COMMENTS:
            if sibling.type in self.language.decorators:
                below, sibling = sibling, _previous(sibling)
                continue
            if sibling.type not in self.language.comments:
                break
            if _last_row(sibling) < below.start_point.row - 1 or not self.starts_line(sibling):
                break
            text = self.parsed.text(sibling.start_byte, sibling.end_byte)
            if text.startswith("#!") and sibling.start_byte == 0:
                break  # a script's interpreter line
            comments.append(text)
            below, sibling = sibling, _previous(sibling)
        return first_line("\n".join(_uncommented(text) for text in reversed(comments)))

    def starts_line(self, node: Node) -> bool:
        start = node.start_point
        return not self.parsed.line(start.row)[: start.column].strip(_BLANK)

    def clean(self, text: str) -> str:
        return _cap(_SPACE.sub(" ", text).strip(), MAX_SIGNATURE)


class _Code(_Lookup):
    def at(self, line: int) -> Definition | None:
        node = self.attributed(self.node_at(line, last=False))
        chain: list[tuple[Node, Rule, EntityKind]] = []
        seen: set[int] = set()
        while node is not None:
            found = self.definition(node)
            if found is not None and found[0].id not in seen:  # a wrapper: seen inside
                seen.add(found[0].id)
                chain.append(found)
            node = node.parent
        if not chain:
            return None
        return self.describe(chain)

    def attributed(self, node: Node | None) -> Node | None:
        """On an attribute written above an item (Rust's ``#[test]``): the item."""
        found = node
        while found is not None and found.type not in self.language.decorators:
            found = found.parent
        if found is None or found.parent is None or self.definition(found.parent) is not None:
            return node  # none, or a decorator inside its definition (Python, Java)
        below = found.next_named_sibling
        while below is not None and (
            below.type in self.language.decorators or below.type in self.language.comments
        ):
            below = below.next_named_sibling
        return below if below is not None and self.definition(below) is not None else node

    def definition(self, node: Node) -> tuple[Node, Rule, EntityKind] | None:
        """``node`` as a definition (a wrapper: the definition it wraps)."""
        if not node.is_named:  # the keyword ``class``, not a class
            return None
        if node.type in self.language.wrappers:
            inner = self.wrapped(node)
            return None if inner is None else self.definition(inner)
        rule = self.language.rules.get(node.type)
        if rule is None:
            return None
        kind = rule.kind
        if rule.values:
            value = node.child_by_field_name("value")
            if value is None or value.type not in rule.values:
                return None
            if value.type == "class":
                kind = EntityKind.CLASS
        elif node.type.endswith("_specifier") and node.child_by_field_name("body") is None:
            return None  # ``struct buffer *b``: a use, not a definition
        if node.type == "type_spec":
            shape = node.child_by_field_name("type")
            kind = {"struct_type": EntityKind.STRUCT, "interface_type": EntityKind.INTERFACE}.get(
                shape.type if shape is not None else "", EntityKind.TYPE
            )
        return node, rule, kind

    def wrapped(self, node: Node) -> Node | None:
        """The one definition a wrapper holds (None when it holds none, or several)."""
        inner = [
            child
            for child in node.named_children
            if child.type in self.language.rules or child.type in self.language.wrappers
        ]
        return inner[0] if len(inner) == 1 else None

    def span(self, node: Node) -> Node:
        """The outermost wrapper around ``node`` that is all about it."""
        while node.parent is not None and node.parent.type in self.language.wrappers:
            if self.wrapped(node.parent) is None:
                break
            node = node.parent
        return node

    def describe(self, chain: list[tuple[Node, Rule, EntityKind]]) -> Definition:
        node, rule, kind = chain[0]
        outer = [(self.name(n, r), k) for n, r, k in reversed(chain[1:])]
        parent_kind = chain[1][2] if len(chain) > 1 else None
        if kind is EntityKind.FUNCTION and parent_kind in self.language.containers:
            kind = EntityKind.METHOD
        own = self.name(node, rule)
        if node.type == "method_declaration" and self.language.name == "go":
            receiver = self.receiver(node)
            outer = [(receiver, EntityKind.STRUCT)] if receiver else []
        elif kind is EntityKind.FUNCTION and "::" in own and self.language.name == "cpp":
            kind = EntityKind.METHOD  # ``Matrix::transpose``: a member defined outside
        span = self.span(node)
        first = span
        decorators = self.decorators(node, span)
        while (previous := _previous(first)) is not None and (
            previous.type in self.language.decorators
            and _last_row(previous) >= first.start_point.row - 1
        ):
            first = previous  # Rust's ``#[derive(...)]`` above an item
        return Definition(
            kind=kind,
            name=self.qualified(outer, own, kind),
            signature=self.signature(node, rule, span, kind),
            doc=self.docstring(node, rule) or self.doc_comments(span),
            decorators=decorators,
            location=self.location(first, span),
            language=self.language.name,
            prefix=self.language.prefix,
        )

    def qualified(self, outer: list[tuple[str, EntityKind]], own: str, kind: EntityKind) -> str:
        if self.language.name != "ruby":
            return self.language.separator.join([*(name for name, _ in outer), own])
        prefix = "::".join(name for name, _ in outer)
        if not prefix:
            return own
        if own.startswith("self."):
            return f"{prefix}.{own.removeprefix('self.')}"
        return f"{prefix}#{own}" if kind is EntityKind.METHOD else f"{prefix}::{own}"

    def name(self, node: Node, rule: Rule) -> str:
        if rule.name is None:  # C and C++: the declarator's innermost name
            found = node.child_by_field_name("declarator")
            while found is not None and found.type not in _NAME_TYPES:
                found = found.child_by_field_name("declarator") or next(
                    (c for c in found.named_children if c.type in _NAME_TYPES), None
                )
            return self.clean(self.node_text(found)) if found is not None else "(anonymous)"
        field = node.child_by_field_name(rule.name)
        if field is None and node.parent is not None and node.parent.type == "type_definition":
            field = node.parent.child_by_field_name("declarator")  # typedef struct {...} name
        if field is None:
            return "(anonymous)"
        text = self.clean(self.node_text(field))
        if node.type == "singleton_method":
            target = node.child_by_field_name("object")
            return f"{self.node_text(target) if target is not None else 'self'}.{text}"
        if field.type == "string" and self.language.name != "json":
            text = text.strip("'\"`")
        return text

    def receiver(self, node: Node) -> str:
        receiver = node.child_by_field_name("receiver")
        if receiver is None:
            return ""
        types = [c for c in receiver.named_children if c.type == "parameter_declaration"]
        kind = types[0].child_by_field_name("type") if types else None
        return "" if kind is None else self.node_text(kind).lstrip("*").split("[", 1)[0]

    def node_text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.parsed.text(node.start_byte, min(node.end_byte, node.start_byte + 1000))

    def signature(self, node: Node, rule: Rule, span: Node, kind: EntityKind) -> str:
        if kind is EntityKind.TYPE or (node.type == "type_spec"):
            text = self.node_text(node)
            if node.type == "type_spec":
                shape = node.child_by_field_name("type")
                if kind is not EntityKind.TYPE and shape is not None:
                    text = f"{self.name(node, rule)} {shape.type.removesuffix('_type')}"
                text = f"type {text}"
            return self.clean(_fold(text).rstrip(";"))
        header = node.child_by_field_name("value") if rule.values else node
        body = _body(header, rule) if header is not None else None
        end = body.start_byte if body is not None else node.end_byte
        start = span.start_byte
        end = min(end, start + _HEADER_BYTES)
        pieces: list[str] = []
        at = start
        for skipped in self._skipped(span, start, end):
            pieces.append(self.parsed.text(at, skipped.start_byte))
            at = max(at, skipped.end_byte)
        pieces.append(self.parsed.text(at, end))
        text = _fold("".join(pieces)).strip()
        if self.language.name == "python":
            text = text.removesuffix(":").rstrip()
        return self.clean(text.removesuffix(";").rstrip())

    def _skipped(self, node: Node, start: int, end: int) -> Iterator[Node]:
        """Comments and decorators between ``start`` and ``end``, in order."""
        skip = self.language.comments | self.language.decorators
        stack = [node]
        found: list[Node] = []
        while stack:
            for child in stack.pop().children:
                if child.end_byte <= start or child.start_byte >= end:
                    continue
                if child.type in skip:
                    found.append(child)
                elif child.child_count:
                    stack.append(child)
        return iter(sorted(found, key=lambda n: n.start_byte))

    def decorators(self, node: Node, span: Node) -> tuple[str, ...]:
        kinds = self.language.decorators
        if not kinds:
            return ()
        found = [c for c in span.children if c.type in kinds]
        found += [c for c in node.children if c.type in kinds and span is not node]
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        if modifiers is not None:
            found += [c for c in modifiers.children if c.type in kinds]
        above: list[Node] = []
        first = span
        while (previous := _previous(first)) is not None and previous.type in kinds:
            above.insert(0, previous)
            first = previous
        return tuple(self.clean(self.node_text(d)) for d in [*above, *found])

    def docstring(self, node: Node, rule: Rule) -> str:
        """Python's: the string that is its body's first statement."""
        if self.language.name != "python" or rule.body is None:
            return ""
        body = node.child_by_field_name(rule.body)
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement" and first.named_children:
            first = first.named_children[0]
        if first is None or first.type != "string":
            return ""
        content = "".join(
            self.node_text(c) for c in first.named_children if c.type == "string_content"
        )
        return first_line(inspect.cleandoc(content))


class _Keys(_Lookup):
    def at(self, line: int) -> Definition | None:
        node = self.node_at(line, last=True)
        if node is not None and node.type == "comment" and node.start_point.row == line:
            before = self.parsed.line(line)[: node.start_point.column].rstrip(_BLANK)
            if not before.strip(_BLANK):
                return None  # a comment line
            point = Point(line, len(before) - 1)
            node = self.parsed.tree.root_node.descendant_for_point_range(point, point)
        segments: list[str | int] = []
        innermost: Node | None = None
        while node is not None:
            parent = node.parent
            found = self.segments(node)
            if (
                parent is not None
                and parent.type in _SEQUENCES
                and node.is_named
                and node.type != "comment"
            ):
                found = [_index(node, lambda n: n.is_named and n.type != "comment")]
            if found:
                segments[:0] = found
                innermost = innermost or node
            node = parent
        if not segments or innermost is None:
            return None
        key_path = _key_path(segments)
        return Definition(
            kind=EntityKind.KEY,
            name=key_path,
            signature="",
            doc=self.doc_comments(innermost),
            decorators=(),
            location=self.location(innermost, innermost),
            language=self.language.name,
            prefix=self.language.prefix,
            key_path=key_path,
        )

    def segments(self, node: Node) -> list[str | int]:
        kind = node.type
        if kind in _PAIRS:
            key = node.child_by_field_name("key")
            if key is None and node.named_children:
                key = node.named_children[0]  # TOML names no fields
            return self.keys(key) if key is not None else []
        if kind == "block_sequence_item":
            return [_index(node, lambda n: n.type == "block_sequence_item")]
        if kind in ("table", "table_array_element") and node.named_children:
            keys = self.keys(node.named_children[0])
            if kind == "table_array_element":
                header = self.node_text(node.named_children[0])
                keys.append(
                    _index(
                        node,
                        lambda n: (
                            n.type == kind
                            and bool(n.named_children)
                            and self.node_text(n.named_children[0]) == header
                        ),
                    )
                )
            return keys
        return []

    def keys(self, key: Node) -> list[str | int]:
        if key.type == "dotted_key":
            return [part for child in key.named_children for part in self.keys(child)]
        if key.type == "flow_node" and key.named_children:
            key = key.named_children[0]
        text = self.node_text(key).strip()
        if key.type in ("string", "quoted_key", "double_quote_scalar"):
            try:
                text = str(json.loads(text))
            except ValueError:
                text = text[1:-1]
        elif key.type == "single_quote_scalar":
            text = text[1:-1].replace("''", "'")
        return [text]

    def node_text(self, node: Node) -> str:
        return self.parsed.text(node.start_byte, min(node.end_byte, node.start_byte + 1000))


def _key_path(segments: list[str | int]) -> str:
    parts: list[str] = []
    for segment in segments:
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif _PLAIN_KEY.fullmatch(segment):
            parts.append(f".{segment}" if parts else segment)
        else:
            parts.append(f"[{json.dumps(segment, ensure_ascii=False)}]")
    return "".join(parts)


def _index(node: Node, counts: Callable[[Node], bool]) -> int:
    index = 0
    sibling = node.prev_sibling
    while sibling is not None:
        index += counts(sibling)
        sibling = sibling.prev_sibling
    return index


def _previous(node: Node) -> Node | None:
    """The named node before ``node``: its sibling, or (when ``node`` opens its
    parent, as a Ruby class opens a ``body_statement``) its parent's."""
    while node is not None:
        previous = node.prev_named_sibling
        if previous is not None:
            return previous
        parent = node.parent
        if parent is None or parent.start_byte != node.start_byte:
            return None
        node = parent
    return None


def _last_row(node: Node) -> int:
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _body(node: Node, rule: Rule) -> Node | None:
    return node.child_by_field_name(rule.body) if rule.body else None


def _fold(text: str) -> str:
    """A header written over several lines, on one."""
    text = " ".join(part.strip() for part in text.splitlines())
    text = _OPEN_SPACE.sub(r"\1", text)
    text = _SPACE_CLOSE.sub(r"\1", text)
    return _TRAILING_COMMA.sub(r"\1", text)


def _uncommented(text: str) -> str:
    text = text.strip()
    if text.startswith("/*"):
        text = text[2:].lstrip("*!").removesuffix("*/")
    return "\n".join(_COMMENT_MARK.sub("", line.strip()) for line in text.splitlines())


def first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _cap(line, MAX_DOC)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
