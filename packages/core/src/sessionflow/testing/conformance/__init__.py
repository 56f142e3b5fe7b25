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

# Everything is imported eagerly, hooks and fixtures above all: pytest registers this
# module as the plugin (``-p`` or ``pytest_plugins``), and pluggy >= 1.7 finds hooks with
# ``inspect.getattr_static``, which does not see names a module ``__getattr__`` would
# load, so a lazy wrapper hook was registered as a plain one. The price is that a worker
# child (``python -m sessionflow.testing.conformance.worker``) imports pytest and the
# driver too, about 0.45 s more per worker start.
from sessionflow.testing.conformance._case_files import CaseFileError
from sessionflow.testing.conformance._cases import (
    CAPABILITIES,
    ConformanceCase,
    bundled_cases_dir,
    load_case,
    load_cases,
)
from sessionflow.testing.conformance._driver import CaseRun, ConformanceFailure, PlayedCase, play_case
from sessionflow.testing.conformance._plugin import (
    discover_frameworks,
    pytest_addoption,
    pytest_configure,
    pytest_generate_tests,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
    pytest_terminal_summary,
    pytest_unconfigure,
    selected_runs,
    sessionflow_conformance_loop,
    sessionflow_conformance_runtime,
    sessionflow_conformance_server,
    test_conformance,
)
from sessionflow.testing.conformance._runtime import ConformanceRuntime

__all__ = [
    "CAPABILITIES",
    "CaseFileError",
    "CaseRun",
    "ConformanceCase",
    "ConformanceFailure",
    "ConformanceRuntime",
    "PlayedCase",
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
