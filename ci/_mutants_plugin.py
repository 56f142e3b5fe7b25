"""The pytest side of ci/mutants (loaded with ``-p _mutants_plugin``; ci/_mutants.py drives it).

Three jobs, each switched on by an option, so a run without them is an ordinary run:

- ``--mutants-contexts``: in the baseline run, names the coverage context after the test
  that runs (``test:<node id>``), so the driver knows which tests run each line. The name is
  also put in ``SF_MUTANTS_CONTEXT``, which the coverage configuration of child processes
  reads when they start: a worker started by a test records its lines under that test. A
  fixture shared by several tests (scope other than function) runs under ``shared``, and
  so does anything outside a test (collection, imports): a line run there affects every
  test, and the driver runs them all for a mutant on it.
- ``--mutants-select=FILE``: keeps only the tests whose node ids FILE lists (one a line),
  in collection order: a mutant runs only the tests that run its line.
- ``--mutants-result=FILE``: writes, as JSON, each test's duration and outcome, and the
  first failure (node id, and whether it was a time limit rather than an assertion); in
  the baseline run, also the modules the run imported (the fork server's preload).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import coverage
import pytest

CONTEXT_ENV = "SF_MUTANTS_CONTEXT"
SHARED = "shared"

# What a failure says when it was a time limit, not an assertion: pytest-timeout's message,
# and tests/slow_limit.py's (a test that passed in over its limit).
_TIME_LIMIT_MARKS = ("Failed: Timeout", "+++++ Timeout", "a test may take")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mutants", "ci/mutants (mutation testing)")
    group.addoption("--mutants-contexts", action="store_true", default=False)
    group.addoption("--mutants-select", default=None)
    group.addoption("--mutants-result", default=None)


class _Contexts:
    """Switches the coverage context (and the environment children inherit) per test."""

    def __init__(self) -> None:
        self._stack: list[str] = []

    def switch(self, name: str) -> None:
        os.environ[CONTEXT_ENV] = name
        current = coverage.Coverage.current()
        if current is not None:
            current.switch_context(name)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        self.switch(f"test:{item.nodeid}")
        try:
            return (yield)
        finally:
            self.switch(SHARED)

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> Generator[None, object, object]:
        if fixturedef.scope == "function":
            return (yield)
        previous = os.environ.get(CONTEXT_ENV, SHARED)
        self.switch(SHARED)
        try:
            return (yield)
        finally:
            self.switch(previous)


class _Select:
    """Deselects every test the driver's file does not name."""

    def __init__(self, path: Path) -> None:
        self._wanted = set(path.read_text().splitlines())

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        kept = [item for item in items if item.nodeid in self._wanted]
        dropped = [item for item in items if item.nodeid not in self._wanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept


class _Result:
    """Records durations, outcomes and the first failure for the driver."""

    def __init__(self, path: Path, modules: bool) -> None:
        self._path = path
        self._modules = modules
        self._durations: dict[str, float] = {}
        self._failed: list[str] = []
        self._first_failure: dict[str, object] | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._durations[report.nodeid] = self._durations.get(report.nodeid, 0.0) + report.duration
        if report.failed:
            if report.nodeid not in self._failed:
                self._failed.append(report.nodeid)
            if self._first_failure is None:
                text = report.longreprtext
                self._first_failure = {
                    "test": report.nodeid,
                    "when": report.when,
                    "time_limit": any(mark in text for mark in _TIME_LIMIT_MARKS),
                    "text": text[-2000:],
                }

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and self._first_failure is None:
            self._first_failure = {
                "test": report.nodeid,
                "when": "collect",
                "time_limit": False,
                "text": report.longreprtext[-2000:],
            }

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._path.write_text(
            json.dumps(
                {
                    "exitstatus": int(exitstatus),
                    "durations": self._durations,
                    "failed": self._failed,
                    "first_failure": self._first_failure,
                    # What the fork server may import ahead (the driver keeps third-party ones).
                    "modules": {
                        name: getattr(module, "__file__", None) or ""
                        for name, module in list(sys.modules.items())
                    }
                    if self._modules
                    else {},
                }
            )
        )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--mutants-contexts"):
        config.pluginmanager.register(_Contexts(), "mutants-contexts")
    select = config.getoption("--mutants-select")
    if select:
        config.pluginmanager.register(_Select(Path(select)), "mutants-select")
    result = config.getoption("--mutants-result")
    if result:
        modules = bool(config.getoption("--mutants-contexts"))
        config.pluginmanager.register(_Result(Path(result), modules), "mutants-result")
