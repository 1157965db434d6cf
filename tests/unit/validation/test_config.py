"""acp.toml: what a valid file declares, and errors that name file, line and field."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_backend.validation.config import (
    DEFAULT_PATTERN,
    ColumnUnit,
    ConfigCache,
    ConfigError,
    OutputFormat,
    glob_matches,
    parse_config,
)
from acp_client.models import Location, ValidationMode

VALID = """\
# Validations of a test project.

[[validations]]
name = "ruff"
mode = "required"
command = ["ruff", "check", "--output-format", "sarif", "."]
format = "sarif"
applies_to = ["*.py"]
description = "lint"
fix = ["ruff", "check", "--diff", "."]

[[validations]]
name = "tests"
mode = "informational"
command = "pytest -q | tail -n 3"
shell = true
timeout = 30
"""


def error_of(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "/p/acp.toml")
    return caught.value


def test_a_valid_file_declares_its_validations_with_defaults() -> None:
    ruff, tests = parse_config(VALID)
    assert ruff.name == "ruff" and ruff.mode is ValidationMode.REQUIRED
    assert ruff.command == ("ruff", "check", "--output-format", "sarif", ".")
    assert ruff.format is OutputFormat.SARIF and ruff.columns is None
    assert ruff.timeout == 120 and not ruff.shell
    assert ruff.fix == ("ruff", "check", "--diff", ".")
    assert tests.command == "pytest -q | tail -n 3" and tests.shell
    assert tests.format is OutputFormat.EXIT_CODE and tests.timeout == 30
    assert tests.pattern is DEFAULT_PATTERN and tests.fix is None


def test_each_validation_is_anchored_at_its_table_header() -> None:
    ruff, tests = parse_config(VALID)
    assert ruff.line == 3 and tests.line == 12
    spec = ruff.spec()
    assert spec.declared_at == Location(path="acp.toml", line=2, character=0)
    assert spec.has_fix and spec.applies_to == ("*.py",) and spec.description == "lint"
    assert not tests.spec().has_fix


def test_a_pattern_validation_reads_its_pattern_and_column_convention() -> None:
    (todo,) = parse_config(
        '[[validations]]\nname = "todo"\nmode = "informational"\ncommand = ["x"]\n'
        "format = \"pattern\"\npattern = '^(?P<path>[^:]+):(?P<line>\\d+): (?P<message>.*)$'\n"
        'columns = "bytes"\none_based_columns = false\n'
    )
    assert todo.pattern.pattern == "^(?P<path>[^:]+):(?P<line>\\d+): (?P<message>.*)$"
    assert todo.columns is ColumnUnit.BYTES and not todo.one_based_columns


def test_a_missing_or_empty_file_declares_nothing() -> None:
    assert parse_config("") == ()
    assert parse_config("[other]\nkey = 1\n") == ()


@pytest.mark.parametrize(
    ("replace", "by", "line", "field", "fragment"),
    [
        ("timeout = 30", "timeout = -1", 17, "validations[2].timeout", "greater than 0"),
        ("timeout = 30", 'timeout = "30"', 17, "validations[2].timeout", "valid number"),
        ('mode = "informational"', 'mode = "optional"', 14, "validations[2].mode", "'required'"),
        ('description = "lint"', 'descripton = "lint"', 9, "validations[1].descripton", "unknown"),
        ('name = "tests"', 'name = "ruff"', 13, "validations[2].name", "duplicate"),
        ('name = "tests"', 'name = "has space"', 13, "validations[2].name", "pattern"),
        ("shell = true\n", "", 15, "validations[2].command", "shell = true"),
        ('["ruff", "check", "--output-format"', "[] #", 6, "validations[1].command", "empty"),
        ('format = "sarif"', 'format = "xml"', 7, "validations[1].format", "'sarif'"),
    ],
)
def test_errors_name_the_file_the_line_and_the_field(
    replace: str, by: str, line: int, field: str, fragment: str
) -> None:
    assert replace in VALID
    error = error_of(VALID.replace(replace, by, 1))
    assert (error.file, error.line, error.field) == ("/p/acp.toml", line, field)
    assert fragment in error.message
    assert str(error).startswith(f"/p/acp.toml:{line}: {field}: ")


def test_a_missing_required_field_points_at_the_table() -> None:
    error = error_of('[[validations]]\nname = "x"\nmode = "required"\n')
    assert (error.line, error.field, error.message) == (
        1,
        "validations[1].command",
        "required field is missing",
    )


def test_a_syntax_error_names_its_line() -> None:
    error = error_of(VALID.replace('format = "sarif"', "format = sarif"))
    assert error.line == 7 and error.field is None and "invalid TOML" in error.message


def test_validations_must_be_tables() -> None:
    error = error_of('validations = "ruff"\n')
    assert (error.line, error.field) == (1, "validations")


def test_a_pattern_must_compile_and_use_known_groups_only() -> None:
    base = '[[validations]]\nname = "p"\nmode = "required"\ncommand = ["x"]\nformat = "pattern"\n'
    error = error_of(base + "pattern = '(?P<file>.*)'\n")
    assert (error.line, error.field) == (6, "validations[1].pattern")
    assert "unknown group(s) file" in error.message
    assert "regular expression" in error_of(base + "pattern = '(unclosed'\n").message
    other_format = base.replace('"pattern"', '"sarif"') + "pattern = '(?P<line>.*)'\n"
    assert "only applies to" in error_of(other_format).message


def test_inline_tables_are_accepted_and_anchored_at_the_key() -> None:
    (inline,) = parse_config(
        'validations = [{ name = "x", mode = "required", command = ["true"] }]\n'
    )
    assert inline.name == "x" and inline.line == 1


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "pkg/deep/a.py", True),  # no slash: the file name anywhere
        ("*.py", "a.pyi", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/pkg/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/pkg/deep/a.py", True),
        ("src/**", "src/x/y", True),
        ("docs/?.md", "docs/a.md", True),
        ("a+b.txt", "a+b.txt", True),
    ],
)
def test_applies_to_globs(glob: str, path: str, matches: bool) -> None:
    assert glob_matches(glob, path) is matches


def test_a_validation_without_applies_to_applies_to_every_path() -> None:
    ruff, tests = parse_config(VALID)
    assert ruff.applies_to_any(("src/a.py",)) and not ruff.applies_to_any(("README.md",))
    assert tests.applies_to_any(("README.md",))


class TestConfigCache:
    def write(self, root: Path, text: str) -> None:
        path = root / "acp.toml"
        path.write_text(text, encoding="utf-8")
        # Move the mtime on so that a rewrite within the clock's resolution counts.
        stamp = path.stat().st_mtime_ns + 1_000_000_000 * (1 + len(text) % 7)
        os.utime(path, ns=(stamp, stamp))

    def test_no_file_means_no_validations(self, tmp_path: Path) -> None:
        loaded = ConfigCache().get(tmp_path)
        assert loaded.validations == () and loaded.error is None

    def test_a_changed_file_is_read_again(self, tmp_path: Path) -> None:
        cache = ConfigCache()
        self.write(tmp_path, VALID)
        assert [v.name for v in cache.get(tmp_path).validations] == ["ruff", "tests"]
        self.write(tmp_path, VALID.replace('name = "tests"', 'name = "unit"'))
        assert [v.name for v in cache.get(tmp_path).validations] == ["ruff", "unit"]

    def test_a_broken_file_keeps_the_previous_configuration_and_reports_why(
        self, tmp_path: Path
    ) -> None:
        cache = ConfigCache()
        self.write(tmp_path, VALID)
        before = cache.get(tmp_path).validations
        self.write(tmp_path, VALID.replace("timeout = 30", "timeout = 0"))
        broken = cache.get(tmp_path)
        assert broken.validations == before
        assert broken.error is not None and broken.error.line == 17
        assert broken.error.file == str(tmp_path / "acp.toml")
        self.write(tmp_path, VALID.replace("timeout = 30", "timeout = 5"))
        fixed = cache.get(tmp_path)
        assert fixed.error is None and fixed.validations[1].timeout == 5

    def test_a_file_broken_from_the_start_declares_nothing(self, tmp_path: Path) -> None:
        self.write(tmp_path, "[[validations]]\nname = 1\n")
        loaded = ConfigCache().get(tmp_path)
        assert loaded.validations == () and loaded.error is not None

    def test_a_file_that_is_not_utf8_names_the_line(self, tmp_path: Path) -> None:
        (tmp_path / "acp.toml").write_bytes(b"# ok\n# caf\xe9\n")
        error = ConfigCache().get(tmp_path).error
        assert error is not None and error.line == 2 and "UTF-8" in error.message
