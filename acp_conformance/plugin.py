"""The pytest plugin (entry point ``pytest11``): options, the suite to collect,
the conformance table.

Inactive unless ``--acp-conformance`` is given: then the suite's module in
this package is what pytest collects, its fixtures are registered, and the
table is printed at the end (and written with ``--acp-conformance-report``).
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest

from acp_conformance.options import KitOptions, add_options, parse_options
from acp_conformance.report import Report

OPTIONS = pytest.StashKey[KitOptions]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


LOOP_SCOPE_UNSET = r'The configuration option "asyncio_default_fixture_loop_scope" is unset'


def pytest_cmdline_main(config: pytest.Config) -> None:
    """The kit's checks are synchronous (it drives its own event loop), so
    pytest-asyncio's advice to the project about its loop scope does not
    apply to a kit run: it is not shown. Decided before any plugin's
    ``pytest_configure``, where pytest-asyncio would say it."""
    if config.getoption("acp_conformance", None) is None:
        return
    try:
        unset = config.getini("asyncio_default_fixture_loop_scope") is None
    except ValueError:  # pytest-asyncio is not installed
        return
    if unset:
        config.pluginmanager.register(QuietLoopScope(), "acp_conformance.loop_scope")


class QuietLoopScope:
    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self) -> None:
        # Inside pytest's own warnings context for configure (which resets
        # the filters), ahead of pytest-asyncio's hook.
        warnings.filterwarnings("ignore", message=LOOP_SCOPE_UNSET)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    options = parse_options(config)
    if options is None:
        return
    if options.suite == "server" and importlib.util.find_spec("pytest_lsp") is None:
        raise pytest.UsageError(
            "the server suite needs pytest-lsp: pip install 'acp-lsp[conformance]'"
        )
    config.stash[OPTIONS] = options
    # Only the suite: not the project's own tests pytest would find here.
    config.args[:] = [str(Path(__file__).with_name(f"{options.suite}_suite.py"))]
    from acp_conformance import fixtures

    config.pluginmanager.register(fixtures, "acp_conformance.fixtures")
    config.pluginmanager.register(Table(options), "acp_conformance.table")


class Table:
    """Builds the conformance table from the run's reports."""

    def __init__(self, options: KitOptions) -> None:
        self.options = options
        self.report = Report(options.suite, options.acp)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            self.report.describe(item)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.report.record(report)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        terminalreporter.write_sep("=", "ACP conformance")
        for line in self.report.lines():
            terminalreporter.write_line(line)
        if self.options.report is not None:
            for path in self.report.write(self.options.report):
                terminalreporter.write_line(f"written: {path}")
