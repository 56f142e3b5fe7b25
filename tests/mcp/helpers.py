"""Servers and small helpers shared by the MCP tests."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessionflow.kit import ToolInvocation
from sessionflow.mcp import McpServerConfig
from tests.mcp.fixture_server import read_log

REPO_ROOT = Path(__file__).resolve().parents[2]

EVERYTHING_ENV = "SESSIONFLOW_MCP_EVERYTHING"
"""Path of ``@modelcontextprotocol/server-everything``'s ``dist/index.js``, if not the default."""

EVERYTHING_DEFAULT = (
    REPO_ROOT / ".sessionflow-test/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)


def invocation(call_id: str = "c1", *, key: str | None = None, attempt: int = 1) -> ToolInvocation:
    return ToolInvocation(
        tool_call_id=call_id, idempotency_key=key or f"s1/turn-1/{call_id}", attempt=attempt
    )


def fixture_command(state_dir: Path, *, http_port: int | None = None) -> list[str]:
    command = [sys.executable, "-m", "tests.mcp.fixture_server", "--state-dir", str(state_dir)]
    return command if http_port is None else [*command, "--http", str(http_port)]


def fixture_config(
    state_dir: Path,
    *,
    name: str = "fx",
    enabled: tuple[str, ...] | None = None,
    required: bool = False,
    tool_prefix: str = "",
) -> McpServerConfig:
    """The project's fixture server over stdio, recording into ``state_dir``."""
    command = fixture_command(state_dir)
    return McpServerConfig(
        name=name,
        command=command[0],
        args=command[1:],
        cwd=REPO_ROOT,
        enabled=enabled,
        required=required,
        tool_prefix=tool_prefix,
    )


def fixture_pids(state_dir: Path) -> list[int]:
    """PIDs of the fixture server processes that started, oldest first."""
    return [int(e["pid"]) for e in read_log(state_dir) if e["event"] == "start"]


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers signal 0; look at its state where /proc exists.
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        try:
            return stat.read_text().split(") ", 1)[1][:1] != "Z"
        except (OSError, IndexError):
            return False
    return True


def everything_entry() -> Path:
    """The everything server's entry script; fails (never skips) when it or node is missing,
    because the README's test command, `bash ci/test`, installs both."""
    entry = Path(os.environ.get(EVERYTHING_ENV) or EVERYTHING_DEFAULT)
    if shutil.which("node") is None:
        pytest.fail("node is not installed; run the tests with `bash ci/test`, which installs it")
    if not entry.exists():
        pytest.fail(
            f"@modelcontextprotocol/server-everything is not installed at {entry}; run the tests "
            "with `bash ci/test`, which installs it (or set SESSIONFLOW_MCP_EVERYTHING)"
        )
    return entry


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class HttpServer:
    """A server process on a local port, in its own process group."""

    def __init__(
        self, command: list[str], port: int, log_path: Path, env: dict[str, str] | None = None
    ) -> None:
        self.command = command
        self.port = port
        self.log_path = log_path
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def start(self, timeout: float = 30.0) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(  # noqa: ASYNC220 - returns at once; the child runs on its own
                self.command,
                cwd=REPO_ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while not _port_open(self.port):
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.process.returncode}:\n{self.log_path.read_text()}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(f"server not listening on {self.port}:\n{self.log_path.read_text()}")
            await asyncio.sleep(0.05)

    def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0
