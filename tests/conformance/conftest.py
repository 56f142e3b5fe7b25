"""Wire the conformance plugin into this repository's test run.

``pytest_plugins`` is only honoured in the top-level conftest, which other code owns, so
this conftest imports the plugin's hooks and fixtures instead (they then apply to this
folder). Run with ``-p sessionflow.testing.conformance`` as well and the plugin notices it
is registered twice and acts once.

The plugin's dev server fixture is replaced by the repository's ``temporal_address`` so
the whole run shares one dev server.
"""

from __future__ import annotations

import pytest

from sessionflow.testing.conformance import (
    pytest_addoption,
    pytest_configure,
    pytest_generate_tests,
    pytest_runtest_makereport,
    pytest_terminal_summary,
    sessionflow_conformance_loop,
    sessionflow_conformance_runtime,
)

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_runtest_makereport",
    "pytest_terminal_summary",
    "sessionflow_conformance_loop",
    "sessionflow_conformance_runtime",
    "sessionflow_conformance_server",
]


@pytest.fixture(scope="session")
def sessionflow_conformance_server(temporal_address: str) -> str:
    """The dev server of the whole test run (tests/conftest.py)."""
    return temporal_address
