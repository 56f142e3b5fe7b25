"""`AgentTestStack`: a dev server, a client, and worker child processes a test can SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from sessionflow._environment import read_env
from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.temporal._search_attributes import register_search_attributes
from sessionflow.temporal.client._client import AgentSessionClient
from sessionflow.temporal.client._connection import connect
from sessionflow.temporal.client._step_history import StepHistoryEntry, read_step_history
from sessionflow.temporal.devserver._config import DevServerConfig
from sessionflow.temporal.devserver._server import DevServer
from sessionflow.temporal.storage._payload_store import PayloadStore
from sessionflow.temporal.worker._sticky import STICKY_QUEUE_TIMEOUT_ENV
from sessionflow.testing._scripted_flow import STATE_DIR_ENV

__all__ = ["SERVER_ADDRESS_ENV", "AgentTestStack", "WorkerProcess", "ensure_test_server"]

SERVER_ADDRESS_ENV = "SESSIONFLOW_TEST_SERVER_ADDRESS"
READY_LINE = "sessionflow worker ready"


async def ensure_test_server(data_dir: Path | None = None) -> str:
    """The dev server for this test run: the one named in the environment, else one we start."""
    address = read_env(SERVER_ADDRESS_ENV)
    if address:
        return address
    folder = data_dir or Path(tempfile.gettempdir()) / f"sessionflow-test-server-{os.getuid()}"
    handle = await DevServer.ensure_running(DevServerConfig(data_dir=folder))
    # A server reused from before search attributes were passed at launch gets them now.
    await register_search_attributes(await connect(handle.address))
    os.environ[SERVER_ADDRESS_ENV] = handle.address
    return handle.address


class WorkerProcess:
    """A worker child in its own process group."""

    def __init__(self, process: subprocess.Popen[bytes], log_path: Path) -> None:
        self.process = process
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL the whole process group, at once, with no chance to clean up."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def sigterm(self) -> None:
        """SIGTERM the worker and return at once: it shuts down gracefully on its own."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)

    def terminate(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    async def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while READY_LINE not in self.log():
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited with {self.process.returncode}:\n{self.log()[-4000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"worker not ready after {timeout} s:\n{self.log()[-4000:]}")
            await asyncio.sleep(0.02)


class AgentTestStack:
    """Everything an integration test of a flow needs.

    Workers run `python -m <worker_module>` with the server address, namespace and the
    state folder in their environment, so they build the same flows as the test.
    """

    def __init__(
        self,
        state_dir: Path,
        flows: Sequence[AgentSessionFlow],
        worker_module: str = "sessionflow.testing.scripted_worker",
        *,
        worker_cwd: Path | None = None,
        worker_env: Mapping[str, str] | None = None,
        server_address: str | None = None,
        payloads: PayloadStore | None = None,
    ) -> None:
        self.state_dir = state_dir
        self.payloads = payloads
        self.flows = list(flows)
        self.worker_module = worker_module
        self.worker_cwd = worker_cwd
        self.worker_env = dict(worker_env or {})
        self.server_address = server_address
        self.workers: list[WorkerProcess] = []
        self._client = None

    async def __aenter__(self) -> AgentTestStack:
        self.server_address = self.server_address or await ensure_test_server()
        self._client = await connect(self.server_address, "default", payloads=self.payloads)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for worker in self.workers:
            worker.kill()

    @property
    def client(self):
        assert self._client is not None, "use AgentTestStack as an async context manager"
        return self._client

    def sessions(self, flow: AgentSessionFlow | None = None) -> AgentSessionClient:
        return AgentSessionClient(self.client, flow or self.flows[0])

    async def start_worker(self, *, ready_timeout: float = 60.0) -> WorkerProcess:
        """Start a worker child and wait until it serves the flows."""
        assert self.server_address is not None
        index = len(self.workers) + 1
        log_path = self.state_dir / f"worker-{index}.log"
        self.state_dir.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "SESSIONFLOW_SERVER_ADDRESS": self.server_address,
            "SESSIONFLOW_NAMESPACE": "default",
            STATE_DIR_ENV: str(self.state_dir),
            "PYTHONUNBUFFERED": "1",
            # A test SIGKILLs workers on purpose: the sessions a dead worker cached go to
            # its replacement after 1 s, not after temporalio's 10 s.
            STICKY_QUEUE_TIMEOUT_ENV: "1",
            **(self.payloads.environment() if self.payloads is not None else {}),
            **self.worker_env,
        }
        with log_path.open("wb") as log:
            process = subprocess.Popen(  # noqa: ASYNC220 - returns at once; the child runs on its own
                [sys.executable, "-m", self.worker_module],
                cwd=self.worker_cwd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        worker = WorkerProcess(process, log_path)
        self.workers.append(worker)
        await worker.wait_ready(ready_timeout)
        return worker

    async def read_step_history(self, session_id: str) -> list[StepHistoryEntry]:
        return await read_step_history(self.client, session_id)
