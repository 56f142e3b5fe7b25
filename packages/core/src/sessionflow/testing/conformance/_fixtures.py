"""Session-scoped fixtures of the conformance plugin: the loop, the dev server, the runtime."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from sessionflow.temporal import DevServer, DevServerConfig
from sessionflow.testing._stack import SERVER_ADDRESS_ENV
from sessionflow.testing.conformance._runtime import ConformanceRuntime, LoopThread

__all__ = [
    "sessionflow_conformance_loop",
    "sessionflow_conformance_runtime",
    "sessionflow_conformance_server",
]


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
    preset = os.environ.get(SERVER_ADDRESS_ENV)
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
