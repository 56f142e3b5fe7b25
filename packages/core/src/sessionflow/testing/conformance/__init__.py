"""The sessionflow conformance suite: a pytest plugin that plays data-driven cases against adapters.

Cases are JSON files (``conformance/cases/`` in the repository, shipped in the wheel as
``sessionflow/testing/conformance/cases``). Every case is played against every framework
that `SessionflowPlugins` discovers, with real worker child processes that a case can
SIGKILL, the scripted model server on the framework's own wire API, and a Temporal dev
server. See ``conformance/README.md`` for the case format.

Use it from a project (pytest is needed; pytest-asyncio is not)::

    # conftest.py at the root of the test tree
    pytest_plugins = ["sessionflow.testing.conformance"]

    # test_sessionflow_conformance.py: the plugin parametrizes this test
    from sessionflow.testing.conformance import test_conformance

or pass ``-p sessionflow.testing.conformance`` instead of ``pytest_plugins``. Options:
``--sessionflow-frameworks=a,b``, ``--sessionflow-cases=id,id``, ``--sessionflow-case-dir=DIR``.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessionflow.testing.conformance._cases import (
        CAPABILITIES,
        ConformanceCase,
        bundled_cases_dir,
        load_case,
        load_cases,
    )
    from sessionflow.testing.conformance._driver import CaseRun, play_case
    from sessionflow.testing.conformance._failure import ConformanceFailure
    from sessionflow.testing.conformance._fixtures import (
        sessionflow_conformance_loop,
        sessionflow_conformance_runtime,
        sessionflow_conformance_server,
    )
    from sessionflow.testing.conformance._frameworks import discover_frameworks
    from sessionflow.testing.conformance._plugin import (
        pytest_addoption,
        pytest_configure,
        pytest_generate_tests,
        pytest_runtest_logreport,
        pytest_runtest_makereport,
        pytest_terminal_summary,
        pytest_unconfigure,
        selected_runs,
    )
    from sessionflow.testing.conformance._reader import CaseFileError
    from sessionflow.testing.conformance._runtime import ConformanceRuntime
    from sessionflow.testing.conformance._suite import test_conformance

# Public names by the private module that defines them. They load on first use, so a
# worker child (``python -m sessionflow.testing.conformance.worker``) imports neither
# pytest nor the driver. pytest and pluggy find the hooks and fixtures through ``dir()``.
_EXPORTS: dict[str, str] = {
    "CAPABILITIES": "_cases",
    "ConformanceCase": "_cases",
    "bundled_cases_dir": "_cases",
    "load_case": "_cases",
    "load_cases": "_cases",
    "CaseRun": "_driver",
    "ConformanceFailure": "_failure",
    "play_case": "_driver",
    "sessionflow_conformance_loop": "_fixtures",
    "sessionflow_conformance_runtime": "_fixtures",
    "sessionflow_conformance_server": "_fixtures",
    "discover_frameworks": "_frameworks",
    "pytest_addoption": "_plugin",
    "pytest_configure": "_plugin",
    "pytest_generate_tests": "_plugin",
    "pytest_runtest_logreport": "_plugin",
    "pytest_runtest_makereport": "_plugin",
    "pytest_terminal_summary": "_plugin",
    "pytest_unconfigure": "_plugin",
    "selected_runs": "_plugin",
    "CaseFileError": "_reader",
    "ConformanceRuntime": "_runtime",
    "test_conformance": "_suite",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "CAPABILITIES",
    "CaseFileError",
    "CaseRun",
    "ConformanceCase",
    "ConformanceFailure",
    "ConformanceRuntime",
    "bundled_cases_dir",
    "discover_frameworks",
    "load_case",
    "load_cases",
    "play_case",
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
    "test_conformance",
]
