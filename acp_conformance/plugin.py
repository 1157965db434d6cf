"""The pytest plugin (entry point ``pytest11``): options, the suite to collect,
the conformance table.

Inactive unless ``--acp-conformance`` is given: then the suite's module in
this package is what pytest collects, its fixtures are registered, and the
table is printed at the end (and written with ``--acp-conformance-report``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from acp_conformance.options import KitOptions, add_options, parse_options
from acp_conformance.report import Report

OPTIONS = pytest.StashKey[KitOptions]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


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
