"""Which language a file is in, and what its definitions look like in tree-sitter.

The language comes from the file name (its extension, or a few well-known
names such as ``Gemfile``), then from a ``#!`` line (``#!/usr/bin/env
bash``). Each language names the grammar of ``tree-sitter-language-pack``
that parses it, the id prefix of its entities, the Markdown fence a client
highlights it with, and its definitions: the node types that are one, what
kind each is and where its name is. Data languages (YAML, TOML, JSON) have
no definitions: a position in them is a key path.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from acp_client.models import EntityKind

K = EntityKind


@dataclass(frozen=True)
class Rule:
    """One node type that is a definition.

    ``name``: the field holding its name (``None``: the language's own rule,
    in ``entities``). ``body``: the field where its header ends. ``values``:
    for a declarator (``const f = () => ...``), the value types that make it a
    definition; any other value is not one.
    """

    kind: EntityKind
    name: str | None = "name"
    body: str | None = "body"
    values: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Language:
    name: str  # also the Markdown fence's language
    grammar: str
    prefix: str  # of entity ids
    rules: dict[str, Rule] = field(default_factory=dict)
    wrappers: frozenset[str] = frozenset()
    """Nodes around one definition that belong to it (``export``, decorators)."""
    containers: frozenset[str] = frozenset()
    """Kinds of definitions whose functions are methods."""
    comments: frozenset[str] = frozenset({"comment"})
    decorators: frozenset[str] = frozenset()
    """Node types of decorators, annotations and attributes."""
    separator: str = "."
    data: bool = False  # keys, not definitions
    spans: tuple[tuple[bytes, bytes], ...] = ()
    """Opening and closing marks of strings and comments that can hold a
    line at any indentation (an ``excerpt`` must not start inside one)."""
    heredocs: bool = False
    """``<<EOF`` documents, whose lines can be anything."""


_CLASSES = frozenset({K.CLASS, K.STRUCT, K.INTERFACE, K.TRAIT, K.IMPL, K.ENUM})
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)

_JS_RULES = {
    "function_declaration": Rule(K.FUNCTION),
    "generator_function_declaration": Rule(K.FUNCTION),
    "class_declaration": Rule(K.CLASS),
    "class": Rule(K.CLASS),
    "method_definition": Rule(K.METHOD),
    "variable_declarator": Rule(K.FUNCTION, values=_FUNCTION_VALUES | {"class"}),
    "field_definition": Rule(K.METHOD, name="property", values=_FUNCTION_VALUES),
    "pair": Rule(K.FUNCTION, name="key", values=_FUNCTION_VALUES),
}
_TS_RULES = {
    **_JS_RULES,
    "abstract_class_declaration": Rule(K.CLASS),
    "interface_declaration": Rule(K.INTERFACE),
    "type_alias_declaration": Rule(K.TYPE, body="value"),
    "enum_declaration": Rule(K.ENUM),
    "internal_module": Rule(K.MODULE),
    "module": Rule(K.MODULE),
    "function_signature": Rule(K.FUNCTION, body=None),
    "method_signature": Rule(K.METHOD, body=None),
    "abstract_method_signature": Rule(K.METHOD, body=None),
    "public_field_definition": Rule(K.METHOD, values=_FUNCTION_VALUES),
}
_JS_WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration"})
_BLOCK_COMMENT = (b"/*", b"*/")
_JS_SPANS = (_BLOCK_COMMENT, (b"`", b"`"))
_C_RULES = {
    "function_definition": Rule(K.FUNCTION, name=None),
    "struct_specifier": Rule(K.STRUCT),
    "union_specifier": Rule(K.STRUCT),
    "enum_specifier": Rule(K.ENUM),
}

LANGUAGES: dict[str, Language] = {
    language.name: language
    for language in (
        Language(
            "python",
            "python",
            "py",
            {
                "function_definition": Rule(K.FUNCTION),
                "class_definition": Rule(K.CLASS),
            },
            wrappers=frozenset({"decorated_definition"}),
            containers=frozenset({K.CLASS}),
            decorators=frozenset({"decorator"}),
            spans=((b'"""', b'"""'), (b"'''", b"'''")),
        ),
        Language(
            "javascript",
            "javascript",
            "js",
            _JS_RULES,
            wrappers=_JS_WRAPPERS,
            containers=frozenset({K.CLASS}),
            decorators=frozenset({"decorator"}),
            spans=_JS_SPANS,
        ),
        Language(
            "typescript",
            "typescript",
            "ts",
            _TS_RULES,
            wrappers=_JS_WRAPPERS | {"ambient_declaration"},
            containers=frozenset({K.CLASS, K.INTERFACE}),
            decorators=frozenset({"decorator"}),
            spans=_JS_SPANS,
        ),
        Language(
            "tsx",
            "tsx",
            "tsx",
            _TS_RULES,
            wrappers=_JS_WRAPPERS | {"ambient_declaration"},
            containers=frozenset({K.CLASS, K.INTERFACE}),
            decorators=frozenset({"decorator"}),
            spans=_JS_SPANS,
        ),
        Language(
            "go",
            "go",
            "go",
            {
                "function_declaration": Rule(K.FUNCTION),
                "method_declaration": Rule(K.METHOD),
                "type_spec": Rule(K.TYPE, body="type"),
                "method_elem": Rule(K.METHOD, body=None),
            },
            wrappers=frozenset({"type_declaration"}),
            containers=frozenset({K.INTERFACE}),
            spans=_JS_SPANS,
        ),
        Language(
            "rust",
            "rust",
            "rs",
            {
                "function_item": Rule(K.FUNCTION),
                "function_signature_item": Rule(K.FUNCTION, body=None),
                "struct_item": Rule(K.STRUCT),
                "union_item": Rule(K.STRUCT),
                "enum_item": Rule(K.ENUM),
                "trait_item": Rule(K.TRAIT),
                "impl_item": Rule(K.IMPL, name="type"),
                "mod_item": Rule(K.MODULE),
                "type_item": Rule(K.TYPE, body="type"),
            },
            containers=frozenset({K.IMPL, K.TRAIT}),
            comments=frozenset({"line_comment", "block_comment"}),
            decorators=frozenset({"attribute_item"}),
            separator="::",
            spans=(_BLOCK_COMMENT, (b'"', b'"')),
        ),
        Language(
            "java",
            "java",
            "java",
            {
                "class_declaration": Rule(K.CLASS),
                "record_declaration": Rule(K.CLASS),
                "interface_declaration": Rule(K.INTERFACE),
                "annotation_type_declaration": Rule(K.INTERFACE),
                "enum_declaration": Rule(K.ENUM),
                "method_declaration": Rule(K.METHOD),
                "constructor_declaration": Rule(K.METHOD),
            },
            containers=_CLASSES,
            comments=frozenset({"line_comment", "block_comment"}),
            decorators=frozenset({"marker_annotation", "annotation"}),
            spans=(_BLOCK_COMMENT, (b'"""', b'"""')),
        ),
        Language("c", "c", "c", _C_RULES, containers=frozenset(), spans=(_BLOCK_COMMENT,)),
        Language(
            "cpp",
            "cpp",
            "cpp",
            {
                **_C_RULES,
                "class_specifier": Rule(K.CLASS),
                "namespace_definition": Rule(K.MODULE),
            },
            wrappers=frozenset({"template_declaration"}),
            containers=frozenset({K.CLASS, K.STRUCT}),
            separator="::",
            spans=(_BLOCK_COMMENT, (b'R"(', b')"')),
        ),
        Language(
            "ruby",
            "ruby",
            "rb",
            {
                "method": Rule(K.FUNCTION),
                "singleton_method": Rule(K.METHOD),
                "class": Rule(K.CLASS),
                "module": Rule(K.MODULE),
            },
            containers=frozenset({K.CLASS, K.MODULE}),
            separator="::",
            spans=((b"=begin", b"=end"),),
            heredocs=True,
        ),
        Language("bash", "bash", "sh", {"function_definition": Rule(K.FUNCTION)}, heredocs=True),
        Language("yaml", "yaml", "yaml", data=True),
        Language("toml", "toml", "toml", data=True),
        Language("json", "json", "json", data=True),
    )
}

_EXTENSIONS = {
    "py": "python",
    "pyi": "python",
    "pyw": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "hh": "cpp",
    "hpp": "cpp",
    "hxx": "cpp",
    "h++": "cpp",
    "ipp": "cpp",
    "rb": "ruby",
    "rake": "ruby",
    "gemspec": "ruby",
    "ru": "ruby",
    "sh": "bash",
    "bash": "bash",
    "bats": "bash",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "json": "json",
    "jsonc": "json",
    "json5": "json",
    "geojson": "json",
}
_NAMES = {
    "gemfile": "ruby",
    "rakefile": "ruby",
    "guardfile": "ruby",
    "vagrantfile": "ruby",
    "pipfile": "toml",
    "cargo.lock": "toml",
    "poetry.lock": "toml",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".bash_aliases": "bash",
    ".profile": "bash",
    "pkgbuild": "bash",
    ".eslintrc": "json",
    ".babelrc": "json",
}
_INTERPRETERS = {
    "python": "python",
    "pypy": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
    "tsx": "typescript",
    "bun": "javascript",
    "ruby": "ruby",
    "bash": "bash",
    "sh": "bash",
    "dash": "bash",
    "ksh": "bash",
}
_VERSION = re.compile(r"[\d.]+$")
SHEBANG_PROBE = 256
"""Characters of a file's first line read for a ``#!``."""


def language_of(path: str, text: str | None = None) -> Language | None:
    """The language of the file at ``path`` (POSIX) holding ``text``, or None."""
    filename = posixpath.basename(path).lower()
    named = _NAMES.get(filename)
    if named is None and "." in filename.lstrip("."):
        named = _EXTENSIONS.get(filename.rsplit(".", 1)[1])
    if named is None and text is not None:
        named = _from_shebang(text[:SHEBANG_PROBE])
    return None if named is None else LANGUAGES[named]


def _from_shebang(head: str) -> str | None:
    if not head.startswith("#!"):
        return None
    words = head[2:].split("\n", 1)[0].split()
    if not words:
        return None
    program = posixpath.basename(words[0])
    if program == "env":
        rest = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        if not rest:
            return None
        program = posixpath.basename(rest[0])
    return _INTERPRETERS.get(_VERSION.sub("", program) or program)
