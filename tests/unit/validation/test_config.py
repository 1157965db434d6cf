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
from acp_client.models import Location, SuppressPlace, SuppressSpec, ValidationMode

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
        ('name = "tests"', 'name = "ruff"', 13, "validations[2].name", "declared twice"),
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


class TestRefusedAndForgiven:
    """acp.toml mistakes that used to pass silently or crash (issue 8, item 20)."""

    @pytest.mark.parametrize("value", ["inf", "1e300", "nan", "86401"])
    def test_a_timeout_without_a_sane_limit_is_refused(self, value: str) -> None:
        error = error_of(VALID.replace("timeout = 30", f"timeout = {value}"))
        assert error.field == "validations[2].timeout" and error.line == 17

    def test_a_day_is_the_longest_timeout(self) -> None:
        (_, tests) = parse_config(VALID.replace("timeout = 30", "timeout = 86400"))
        assert tests.timeout == 86400

    def test_the_singular_table_name_gets_a_suggestion(self) -> None:
        error = error_of("# x\n[[validation]]\nname = 'a'\n")
        assert error.line == 2 and "did you mean [[validations]]" in error.message

    def test_a_utf8_bom_is_accepted(self, tmp_path: Path) -> None:
        (tmp_path / "acp.toml").write_bytes(b"\xef\xbb\xbf" + VALID.encode())
        loaded = ConfigCache().get(tmp_path)
        assert loaded.error is None and len(loaded.validations) == 2
        assert parse_config("\ufeff" + VALID)[0].line == 3

    @pytest.mark.parametrize(
        "command", ['["ruff", "a\\u0000b"]', '"ruff\\u0000"'], ids=["argv", "shell"]
    )
    def test_a_nul_in_a_command_is_a_config_error(self, command: str) -> None:
        shell = "shell = true\n" if command.startswith('"') else ""
        text = f'[[validations]]\nname = "a"\nmode = "required"\n{shell}command = {command}\n'
        error = error_of(text)
        assert error.field == "validations[1].command" and "NUL" in error.message

    @pytest.mark.parametrize("blank", ['""', '"   "', '"\\n\\t"'])
    def test_a_blank_shell_command_is_refused(self, blank: str) -> None:
        text = f'[[validations]]\nname = "a"\nmode = "required"\nshell = true\ncommand = {blank}\n'
        assert "must not be empty" in error_of(text).message

    def test_paths_must_stay_inside_the_resource(self) -> None:
        for field_name in ("cwd", "output_file"):
            text = (
                f'[[validations]]\nname = "a"\nmode = "required"\ncommand = ["x"]\n'
                f'{field_name} = "../elsewhere"\n'
            )
            assert error_of(text).field == f"validations[1].{field_name}"


class TestPresets:
    def test_a_preset_supplies_the_fields_and_the_table_overrides_them(self) -> None:
        (ruff,) = parse_config('[[validations]]\npreset = "ruff"\nmode = "required"\n')
        assert ruff.name == "ruff" and ruff.format is OutputFormat.JSON
        assert ruff.command[:2] == ("ruff", "check") and ruff.uses_files
        assert "*.py" in ruff.applies_to and ruff.fix is not None
        (custom,) = parse_config(
            '[[validations]]\npreset = "mypy"\nname = "types"\nmode = "informational"\n'
            'command = ["mypy", "src"]\n'
        )
        assert custom.name == "types" and custom.command == ("mypy", "src")
        assert custom.columns is ColumnUnit.BYTES and not custom.uses_files

    def test_an_unknown_preset_names_the_known_ones(self) -> None:
        error = error_of('[[validations]]\nmode = "required"\npreset = "rufff"\n')
        assert error.field == "validations[1].preset" and error.line == 3
        assert "ruff" in error.message and "semgrep" in error.message

    def test_every_preset_is_a_valid_declaration(self) -> None:
        from acp_backend.validation.presets import PRESETS

        counting = set()
        for name in PRESETS:
            (config,) = parse_config(f'[[validations]]\npreset = "{name}"\nmode = "required"\n')
            assert config.preset == name
            if config.columns_count_bom:
                counting.add(name)
        # Measured: these count a BOM in line 1's columns (tests/integration/test_bom_real.py).
        assert counting == {"clang", "pyright", "semgrep", "shellcheck"}

    def test_per_tool_and_per_code_columns(self) -> None:
        (config,) = parse_config(
            '[[validations]]\nname = "a"\nmode = "required"\ncommand = ["x"]\nformat = "sarif"\n'
            'columns = { Bandit = "bytes", ruff = "code-points" }\ncode_columns = { F = "bytes" }\n'
        )
        assert config.columns is None
        assert config.tool_columns == {"bandit": ColumnUnit.BYTES, "ruff": ColumnUnit.CODE_POINTS}
        assert config.code_columns == {"F": ColumnUnit.BYTES}

    def test_json_needs_a_mapping(self) -> None:
        text = '[[validations]]\nname = "a"\nmode = "required"\ncommand = ["x"]\nformat = "json"\n'
        assert error_of(text).field == "validations[1].mapping"


class TestOneLinePerTool:
    def test_a_preset_alone_is_a_whole_declaration(self) -> None:
        (ruff,) = parse_config('[[validations]]\npreset = "ruff"\n')
        assert (ruff.name, ruff.mode, ruff.preset) == ("ruff", ValidationMode.REQUIRED, "ruff")
        (mypy,) = parse_config('[[validations]]\npreset = "mypy"\nmode = "informational"\n')
        assert mypy.mode is ValidationMode.INFORMATIONAL

    def test_without_a_preset_the_mode_is_still_required(self) -> None:
        error = error_of('[[validations]]\nname = "x"\ncommand = ["true"]\n')
        assert (error.field, error.message) == ("validations[1].mode", "required field is missing")

    def test_a_name_declared_twice_names_both_tables(self) -> None:
        error = error_of(
            '# tools\n[[validations]]\npreset = "ruff"\n\n[[validations]]\npreset = "ruff"\n'
            'cwd = "sub"\n'
        )
        assert (error.line, error.field) == (5, "validations[2].name")
        assert error.message == (
            '"ruff" is declared twice (first at line 2); give each a distinct name'
        )
        assert str(error) == (
            '/p/acp.toml:5: validations[2].name: "ruff" is declared twice (first at line 2); '
            "give each a distinct name"
        )

    def test_two_declarations_of_one_preset_with_distinct_names(self) -> None:
        first, second = parse_config(
            '[[validations]]\npreset = "ruff"\n[[validations]]\npreset = "ruff"\n'
            'name = "ruff-docs"\ncwd = "docs"\n'
        )
        assert (first.name, second.name, second.cwd) == ("ruff", "ruff-docs", "docs")


class TestSuppress:
    BASE = '[[validations]]\nname = "a"\nmode = "required"\ncommand = ["x"]\n'

    def test_a_suppress_table_reaches_the_spec(self) -> None:
        (config,) = parse_config(
            self.BASE + 'suppress = { comment = "// lint-ignore {codes}", where = "line_above", '
            'separator = ",", code = "R{code}" }\n'
        )
        expected = SuppressSpec(
            comment="// lint-ignore {codes}",
            where=SuppressPlace.LINE_ABOVE,
            separator=",",
            code="R{code}",
        )
        assert config.suppress == config.spec().suppress == expected
        assert expected.render(("1", "2")) == "// lint-ignore R1,R2"

    def test_only_the_comment_is_needed(self) -> None:
        (config,) = parse_config(
            self.BASE + '[validations.suppress]\ncomment = "# checker: off {codes}"\n'
        )
        assert config.suppress == SuppressSpec(comment="# checker: off {codes}")
        assert config.suppress is not None
        assert config.suppress.where is SuppressPlace.LINE and config.suppress.separator == ", "
        assert config.suppress.render(["E1", "E2"]) == "# checker: off E1, E2"

    def test_no_suppress_without_a_preset_that_has_one(self) -> None:
        (config,) = parse_config(self.BASE)
        assert config.suppress is None and config.spec().suppress is None
        assert parse_config('[[validations]]\npreset = "tsc"\n')[0].suppress is None

    @pytest.mark.parametrize(
        ("table", "field", "fragment"),
        [
            ('{ comment = "# noqa" }', "suppress.comment", "{codes} exactly once"),
            ('{ comment = "# x {codes} {codes}" }', "suppress.comment", "{codes} exactly once"),
            ('{ comment = " {codes} " }', "suppress.comment", "say more than {codes}"),
            ('{ comment = "# x {codes}\\n" }', "suppress.comment", "one line"),
            ('{ comment = "# x {codes}", where = "above" }', "suppress.where", "'line_above'"),
            ('{ comment = "# x {codes}", separator = "" }', "suppress.separator", "not be empty"),
            ('{ comment = "# x {codes}", code = "rule:" }', "suppress.code", "{code} exactly"),
            ('{ comment = "# x {codes}", at = "line" }', "suppress.at", "known: comment, where"),
            ("{}", "suppress.comment", "required field is missing"),
            ('"# noqa: {codes}"', "suppress", "must be a table"),
            ("{ comment = 1 }", "suppress.comment", "valid string"),
        ],
    )
    def test_a_bad_suppress_names_its_key(self, table: str, field: str, fragment: str) -> None:
        error = error_of(self.BASE + f"suppress = {table}\n")
        assert (error.line, error.field) == (5, f"validations[1].{field}")
        assert fragment in error.message, error.message

    def test_a_key_of_a_suppress_subtable_is_named(self) -> None:
        error = error_of(self.BASE + '[validations.suppress]\ncomment = "# x"\n')
        assert error.field == "validations[1].suppress.comment"
        assert "{codes} exactly once" in error.message

    def test_a_table_may_replace_its_presets_suppress(self) -> None:
        (ruff,) = parse_config(
            '[[validations]]\npreset = "ruff"\nsuppress = { comment = "# ruff: noqa: {codes}" }\n'
        )
        assert ruff.suppress == SuppressSpec(comment="# ruff: noqa: {codes}")

    def test_the_presets_that_know_their_tools_comment(self) -> None:
        from acp_backend.validation.presets import PRESETS

        suppress = {
            name: spec
            for name in PRESETS
            if (spec := parse_config(f'[[validations]]\npreset = "{name}"\n')[0].suppress)
        }
        assert {name: spec.render(["X1", "X2"]) for name, spec in suppress.items()} == {
            "ruff": "# noqa: X1, X2",
            "flake8": "# noqa: X1, X2",
            "mypy": "# type: ignore[X1, X2]",
            "pyright": "# pyright: ignore[X1, X2]",
            "bandit": "# nosec X1, X2",
            "semgrep": "# nosemgrep: X1, X2",
            "eslint": "// eslint-disable-next-line X1, X2",
            "shellcheck": "# shellcheck disable=X1,X2",
            "yamllint": "# yamllint disable-line rule:X1 rule:X2",
            "hadolint": "# hadolint ignore=X1,X2",
            "markdownlint": "<!-- markdownlint-disable-next-line X1 X2 -->",
        }
        above = {name for name, spec in suppress.items() if spec.where is SuppressPlace.LINE_ABOVE}
        assert above == {"eslint", "shellcheck", "hadolint", "markdownlint", "yamllint"}
        assert {name for name, spec in suppress.items() if spec.first} == {"mypy"}


def test_a_preset_table_with_a_format_of_its_own_drops_the_presets_json_mapping() -> None:
    """``preset = "ruff"`` with ruff's SARIF, as written before the preset read JSON."""
    (ruff,) = parse_config(
        '[[validations]]\npreset = "ruff"\nformat = "sarif"\n'
        'command = ["ruff", "check", "--output-format", "sarif", "."]\n'
    )
    assert ruff.format is OutputFormat.SARIF and ruff.mapping is None
