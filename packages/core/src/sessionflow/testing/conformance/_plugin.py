"""The pytest plugin: options, parametrization, fixtures, the frameworks and the matrix.

pytest registers the package (``sessionflow.testing.conformance``), which imports the hooks
and fixtures defined here. The plugin parametrizes `test_conformance`, the suite's one test
function, with every (case, framework) it plays: the frameworks `SessionflowPlugins`
discovers, each case skipped where the framework lacks a capability it needs. Its
session-scoped fixtures provide the loop, the dev server and the runtime; the cases x
frameworks matrix is printed at the end of a run.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import pytest

from sessionflow._environment import read_env
from sessionflow.kit._frameworks import FrameworkSpec
from sessionflow.plugins import PluginError, SessionflowPlugins
from sessionflow.temporal.devserver._config import DevServerConfig
from sessionflow.temporal.devserver._server import DevServer
from sessionflow.testing._stack import SERVER_ADDRESS_ENV
from sessionflow.testing.conformance._cases import Capability, ConformanceCase, bundled_cases_dir, load_cases
from sessionflow.testing.conformance._driver import CaseRun, play_case
from sessionflow.testing.conformance._runtime import ConformanceRuntime, LoopThread

__all__ = [
    "CASES_ENV",
    "CASE_DIR_ENV",
    "FRAMEWORKS_ENV",
    "MARKER",
    "RUN_ARGUMENT",
    "Cell",
    "Matrix",
    "Outcome",
    "discover_frameworks",
    "missing_capability",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_runtest_logreport",
    "pytest_runtest_makereport",
    "pytest_terminal_summary",
    "pytest_unconfigure",
    "selected_runs",
    "sessionflow_conformance_loop",
    "sessionflow_conformance_runtime",
    "sessionflow_conformance_server",
    "skip_reason",
    "test_conformance",
]


# --------------------------------------------------------------------------- frameworks
# Which frameworks the suite plays, and which cases each can run.


def discover_frameworks(names: Sequence[str] = ()) -> list[FrameworkSpec]:
    """Frameworks registered through `SessionflowPlugins` (built-ins plus entry points).

    Discovery honours ``SESSIONFLOW_LOAD_PLUGINS``, ``SESSIONFLOW_DISABLED_PLUGINS`` and
    ``SESSIONFLOW_DISABLE_PLUGIN_AUTOLOAD``, exactly as the worker children do.

    Args:
        names: Restrict to these frameworks, in this order; empty means all, sorted by name.

    Raises:
        UnknownFrameworkError: A name is not registered; the message lists those that are.
        PluginError: A plugin failed to load.
    """
    plugins = SessionflowPlugins()
    plugins.load()
    if names:
        return [plugins.framework(name) for name in dict.fromkeys(names)]
    found = plugins.frameworks()
    return [found[name] for name in sorted(found)]


def missing_capability(case: ConformanceCase, framework: FrameworkSpec) -> Capability | None:
    """The first capability ``case`` needs that ``framework`` declares it lacks."""
    return next((c for c in case.requires if not getattr(framework.capabilities, c)), None)


def skip_reason(framework: FrameworkSpec, capability: Capability) -> str:
    return f"framework {framework.name!r} declares no {capability!r} capability"


# --------------------------------------------------------------------------- matrix
# The cases x frameworks matrix printed at the end of a run.


Outcome = Literal["pass", "fail", "skip"]


@dataclass
class Cell:
    outcome: Outcome
    reason: str = ""

    def render(self) -> str:
        return f"skip({self.reason})" if self.outcome == "skip" and self.reason else self.outcome


@dataclass
class Matrix:
    """Outcomes by (case, framework); rows and columns keep the order they were announced in."""

    cases: list[str] = field(default_factory=lambda: [])
    frameworks: list[str] = field(default_factory=lambda: [])
    cells: dict[tuple[str, str], Cell] = field(default_factory=lambda: {})
    printed: bool = False

    def announce(self, case: str, framework: str) -> None:
        if case not in self.cases:
            self.cases.append(case)
        if framework not in self.frameworks:
            self.frameworks.append(framework)

    def record(self, case: str, framework: str, outcome: Outcome, reason: str = "") -> None:
        """Record one phase's outcome; a failure is never overwritten by a later pass."""
        self.announce(case, framework)
        current = self.cells.get((case, framework))
        if current is not None and current.outcome == "fail":
            return
        self.cells[(case, framework)] = Cell(outcome, reason)

    def lines(self) -> list[str]:
        """The table: one row per case, one column per framework; ``-`` marks a cell that did not run."""
        header = ["case", *self.frameworks]
        rows = [
            [
                case,
                *(
                    self.cells[(case, fw)].render() if (case, fw) in self.cells else "-"
                    for fw in self.frameworks
                ),
            ]
            for case in self.cases
        ]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

        def fmt(row: list[str]) -> str:
            return "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()

        lines = [fmt(header), fmt(["-" * w for w in widths])]
        lines += [fmt(row) for row in rows]
        totals = {o: sum(1 for c in self.cells.values() if c.outcome == o) for o in ("pass", "fail", "skip")}
        lines.append(f"{totals['pass']} passed, {totals['fail']} failed, {totals['skip']} skipped")
        return lines


# --------------------------------------------------------------------------- the test
# The one test function of the suite; the plugin parametrizes it with every (case, framework).


RUN_ARGUMENT = "sessionflow_conformance_run"


def test_conformance(
    sessionflow_conformance_run: CaseRun, sessionflow_conformance_runtime: ConformanceRuntime
) -> None:
    """Play one conformance case against one framework."""
    play_case(sessionflow_conformance_runtime, sessionflow_conformance_run)


# --------------------------------------------------------------------------- fixtures
# Session-scoped fixtures of the conformance plugin: the loop, the dev server, the runtime.


@pytest.fixture(scope="session")
def sessionflow_conformance_loop() -> Iterator[LoopThread]:
    """The event loop thread every case runs on."""
    loop = LoopThread()
    yield loop
    loop.close()


@pytest.fixture(scope="session")
def sessionflow_conformance_server(
    sessionflow_conformance_loop: LoopThread, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The Temporal dev server: ``SESSIONFLOW_TEST_SERVER_ADDRESS`` when set, else one started for this run.

    A project with its own server fixture can override this one in a conftest.
    """
    preset = read_env(SERVER_ADDRESS_ENV)
    if preset:
        yield preset
        return
    server = DevServer(DevServerConfig(data_dir=tmp_path_factory.mktemp("sessionflow-conformance-temporal")))
    handle = sessionflow_conformance_loop.run(server.start(), timeout=120)
    try:
        yield handle.address
    finally:
        sessionflow_conformance_loop.run(server.stop(), timeout=60)


@pytest.fixture(scope="session")
def sessionflow_conformance_runtime(
    sessionflow_conformance_server: str,
    sessionflow_conformance_loop: LoopThread,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ConformanceRuntime]:
    """The scripted model server and the shared settings of every case of this run."""
    runtime = ConformanceRuntime.start(
        sessionflow_conformance_server,
        sessionflow_conformance_loop,
        tmp_path_factory.mktemp("sessionflow-conformance"),
    )
    yield runtime
    runtime.close()


# --------------------------------------------------------------------------- hooks
# pytest hooks of the conformance plugin: options, parametrization, the matrix.


FRAMEWORKS_ENV = "SESSIONFLOW_CONFORMANCE_FRAMEWORKS"
CASES_ENV = "SESSIONFLOW_CONFORMANCE_CASES"
CASE_DIR_ENV = "SESSIONFLOW_CONFORMANCE_CASE_DIR"
MARKER = "sessionflow_conformance"

_MATRIX = pytest.StashKey[Matrix]()
_RUNS = pytest.StashKey[list[CaseRun]]()
_PARAMETRIZED = pytest.StashKey[set[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sessionflow-conformance", "sessionflow conformance suite")
    try:
        group.addoption(
            "--sessionflow-frameworks",
            dest="sessionflow_frameworks",
            default=None,
            metavar="A,B",
            help=f"play the conformance cases only against these frameworks (env: {FRAMEWORKS_ENV})",
        )
        group.addoption(
            "--sessionflow-cases",
            dest="sessionflow_cases",
            default=None,
            metavar="ID,ID",
            help=f"play only these conformance cases (env: {CASES_ENV})",
        )
        group.addoption(
            "--sessionflow-case-dir",
            dest="sessionflow_case_dir",
            default=None,
            metavar="DIR",
            help=f"read the cases from DIR instead of the ones sessionflow ships (env: {CASE_DIR_ENV})",
        )
    except ValueError:
        pass  # registered twice: as a plugin and through a conftest that imports its hooks


_ACTIVE: list[Matrix] = []
"""The matrix of each configured pytest run in this process, innermost last (pytester
runs nest); `pytest_runtest_logreport` has no config to find it by."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: a sessionflow conformance case played against one framework"
    )
    if _MATRIX not in config.stash:
        config.stash[_MATRIX] = Matrix()
        _ACTIVE.append(config.stash[_MATRIX])


def pytest_unconfigure(config: pytest.Config) -> None:
    matrix = config.stash.get(_MATRIX, None)
    if matrix is not None and matrix in _ACTIVE:
        _ACTIVE.remove(matrix)


def _listed(config: pytest.Config, option: str, env: str) -> list[str]:
    raw: Any = config.getoption(option, default=None) or read_env(env, "")
    return [item.strip() for item in str(raw).split(",") if item.strip()]


def _cases(config: pytest.Config) -> list[ConformanceCase]:
    directory: Any = config.getoption("sessionflow_case_dir", default=None) or read_env(CASE_DIR_ENV)
    cases = load_cases(Path(str(directory)) if directory else bundled_cases_dir())
    wanted = _listed(config, "sessionflow_cases", CASES_ENV)
    if not wanted:
        return cases
    by_id = {case.id: case for case in cases}
    unknown = [name for name in wanted if name not in by_id]
    if unknown:
        raise pytest.UsageError(f"unknown conformance case {unknown[0]!r}; cases: {', '.join(sorted(by_id))}")
    return [by_id[name] for name in dict.fromkeys(wanted)]


def selected_runs(config: pytest.Config) -> list[CaseRun]:
    """Every (case, framework) this run plays, cases outer, frameworks inner; computed once."""
    if _RUNS not in config.stash:
        frameworks = discover_frameworks(_listed(config, "sessionflow_frameworks", FRAMEWORKS_ENV))
        config.stash[_RUNS] = [CaseRun(case, fw) for case in _cases(config) for fw in frameworks]
    return config.stash[_RUNS]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if RUN_ARGUMENT not in metafunc.fixturenames:
        return
    done = metafunc.config.stash.setdefault(_PARAMETRIZED, set())
    if metafunc.definition.nodeid in done:
        return  # the plugin is registered twice; parametrize once
    done.add(metafunc.definition.nodeid)
    params: list[Any] = []
    for run in selected_runs(metafunc.config):
        marks: list[pytest.MarkDecorator] = [getattr(pytest.mark, MARKER)]
        missing = missing_capability(run.case, run.framework)
        if missing is not None:
            marks.append(pytest.mark.skip(reason=skip_reason(run.framework, missing)))
        params.append(pytest.param(run, id=run.id, marks=marks))
    metafunc.parametrize(RUN_ARGUMENT, params)


def _run_of(item: pytest.Item) -> CaseRun | None:
    if not isinstance(item, pytest.Function) or not hasattr(item, "callspec"):
        return None
    value: object = item.callspec.params.get(RUN_ARGUMENT)
    return value if isinstance(value, CaseRun) else None


def _skip_text(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


_REPORT_PROPERTY = "sessionflow_conformance"
"""The user property that carries a conformance outcome from the test's process (an
xdist worker, or this one) to the process that prints the matrix."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report: pytest.TestReport = yield
    run = _run_of(item)
    if run is None:
        return report
    case, framework = run.case.id, run.framework.name
    if report.failed:
        outcome = ("fail", "")
    elif report.skipped:
        missing = missing_capability(run.case, run.framework)
        outcome = ("skip", f"no {missing}" if missing else _skip_text(report))
    elif report.when == "call":
        outcome = ("pass", "")
    else:
        return report
    report.user_properties.append((_REPORT_PROPERTY, (case, framework, *outcome)))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Record outcomes where reports arrive: this process, or the xdist controller."""
    if not _ACTIVE:
        return
    matrix = _ACTIVE[-1]
    for name, value in report.user_properties:
        if name != _REPORT_PROPERTY:
            continue
        case, framework, outcome, reason = (str(part) for part in cast(Sequence[object], value))
        if outcome in ("pass", "fail", "skip"):
            matrix.record(case, framework, outcome, reason)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    matrix = config.stash.get(_MATRIX, None)
    if matrix is None or not matrix.cells or matrix.printed:
        return
    matrix.printed = True
    ordered = Matrix()
    try:
        # Under xdist this process collected nothing and saw outcomes in the order they
        # finished: order rows and columns as the runs were selected.
        for run in selected_runs(config):
            ordered.announce(run.case.id, run.framework.name)
    except (pytest.UsageError, PluginError):
        pass
    for case, framework in matrix.cells:
        ordered.announce(case, framework)
    ordered.cells = matrix.cells
    terminalreporter.section("sessionflow conformance matrix (cases x frameworks)")
    for line in ordered.lines():
        terminalreporter.write_line(line)
