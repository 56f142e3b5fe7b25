"""Shared fixtures: one real Temporal dev server per test process, the conformance plugin,
and the scripted-flow harness of `tests.harness` (`harness_factory`, `harness`).

The conformance plugin's hooks and fixtures are imported here, at the top level, so that
the process that prints the summary has them too: under pytest-xdist the controller runs
no tests and loads no lower conftest. Run with ``-p sessionflow.testing.conformance`` as
well and the plugin notices it is registered twice and acts once. Its dev server fixture
is replaced by ``temporal_address`` so a test process shares one dev server.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import settings

from sessionflow.temporal import DevServer, DevServerConfig
from sessionflow.testing import SERVER_ADDRESS_ENV
from sessionflow.testing.conformance import (
    pytest_addoption,
    pytest_configure,
    pytest_generate_tests,
    pytest_runtest_logreport,
    pytest_runtest_makereport,
    pytest_terminal_summary,
    pytest_unconfigure,
    sessionflow_conformance_loop,
    sessionflow_conformance_runtime,
)
from tests.harness import harness, harness_factory

# Hypothesis profiles, picked with $HYPOTHESIS_PROFILE: "ci" (the default) is Hypothesis's
# own defaults, and prints the blob that replays a failure; "thorough" runs many more and
# longer examples (a test that sizes itself for CI, such as the session state machine,
# takes the profile's sizes instead of its own).
settings.register_profile("ci", print_blob=True)
settings.register_profile(
    "thorough", max_examples=1000, stateful_step_count=150, deadline=None, print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# A test that passes in over 60 s fails unless it is marked slow (tests/slow_limit.py).
pytest_plugins = ["tests.slow_limit"]

__all__ = [
    "harness",
    "harness_factory",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_runtest_logreport",
    "pytest_runtest_makereport",
    "pytest_terminal_summary",
    "pytest_unconfigure",
    "sessionflow_conformance_loop",
    "sessionflow_conformance_runtime",
    "sessionflow_conformance_server",
    "temporal_address",
]


# Every client and worker of the run (worker children inherit the environment) keeps its
# payloads in one folder of the run's own, never in the user's ~/.sessionflow.
os.environ.setdefault(
    "SESSIONFLOW_PAYLOADS", tempfile.mkdtemp(prefix=f"sessionflow-test-payloads-{os.getpid()}-")
)

# `connect` reads Temporal's own configuration after SESSIONFLOW_*: the developer's
# TEMPORAL_* variables and temporal.toml stay out of the run (an empty file stands in).
for _name in [name for name in os.environ if name.startswith("TEMPORAL_")]:
    del os.environ[_name]
_empty_temporal_config = Path(tempfile.mkdtemp(prefix="sessionflow-test-temporal-config-")) / "temporal.toml"
_empty_temporal_config.write_text("", encoding="utf-8")
os.environ["TEMPORAL_CONFIG_FILE"] = str(_empty_temporal_config)


@pytest.fixture(scope="session")
async def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """Start the dev server once per run (or use the one named in the environment)."""
    preset = os.environ.get(SERVER_ADDRESS_ENV)
    if preset:
        yield preset
        return
    server = DevServer(DevServerConfig(data_dir=Path(tmp_path_factory.mktemp("temporal"))))
    handle = await server.start()
    os.environ[SERVER_ADDRESS_ENV] = handle.address
    try:
        yield handle.address
    finally:
        os.environ.pop(SERVER_ADDRESS_ENV, None)
        await server.stop()


@pytest.fixture(scope="session")
def sessionflow_conformance_server(temporal_address: str) -> str:
    """The conformance suite plays on this process's dev server."""
    return temporal_address
