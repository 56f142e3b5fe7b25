"""`run_shell_command` on this machine: output, its own process group, timeouts and caps."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools import _shell
from tests.local_tools.conftest import Sandbox


def gone(pid: int) -> bool:
    """Whether the process is dead (a zombie waiting for a reaper counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_exit_code_output_and_directory(sandbox: Sandbox) -> None:
    text = await sandbox.tools.call("run_shell_command", command="echo out; echo err >&2; pwd; exit 3")
    assert text == (
        f"$ echo out; echo err >&2; pwd; exit 3\nexit code 3\n--- stdout ---\nout\n{sandbox.ws}\n--- stderr ---\nerr"
    )
    quiet = await sandbox.tools.call("run_shell_command", command="true")
    assert quiet == "$ true\nexit code 0\n--- stdout: (empty) ---\n--- stderr: (empty) ---"


async def test_the_command_has_its_own_session_and_process_group(unconfined_sandbox: Sandbox) -> None:
    sandbox = unconfined_sandbox  # host pids: no PID namespace
    # Fields 5 and 6 of /proc/PID/stat are the process group and the session.
    text = await sandbox.tools.call("run_shell_command", command="echo $$ $(cut -d' ' -f5,6 /proc/$$/stat)")
    pid, group, session = text.split("--- stdout ---\n")[1].split("\n")[0].split()
    assert pid == group == session  # a new session: Ctrl-C in our terminal never reaches it
    assert int(group) != os.getpgrp()


async def test_long_output_keeps_start_and_end(sandbox: Sandbox) -> None:
    text = await sandbox.tools.call(
        "run_shell_command", command="echo FIRST; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo LAST"
    )
    stdout = text.split("--- stdout ---\n")[1].split("\n--- stderr")[0]
    assert stdout.startswith("FIRST\nxxx") and stdout.endswith("xxx\nLAST")
    dropped = 6 + 1_000_000 + 1 + 5 - _shell.STREAM_CAP_BYTES
    assert f"[... output truncated: {dropped} bytes not shown ...]" in stdout
    assert len(text) < _shell.STREAM_CAP_BYTES * 2


async def test_a_timeout_kills_the_whole_process_group(unconfined_sandbox: Sandbox) -> None:
    sandbox = unconfined_sandbox  # host pids: no PID namespace
    started = time.monotonic()
    text = await sandbox.tools.call(
        "run_shell_command",
        command="sh -c 'sleep 300 & echo $! > grandchild.pid; wait' & echo $! > child.pid; wait",
        timeout_seconds=1,
    )
    assert time.monotonic() - started < 5
    assert "timed out after 1 s; the command and every process it started were killed" in text
    for name in ("child.pid", "grandchild.pid"):
        pid = int((sandbox.ws / name).read_text())
        assert await wait_gone(pid), f"{name} {pid} survived the timeout"


async def test_a_cancelled_call_kills_the_command(unconfined_sandbox: Sandbox) -> None:
    sandbox = unconfined_sandbox  # host pids: no PID namespace
    task = asyncio.create_task(
        sandbox.tools.call("run_shell_command", command="sleep 300 & echo $! > bg.pid; wait")
    )
    pid_file = sandbox.ws / "bg.pid"
    deadline = time.monotonic() + 5
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(pid_file.read_text()))


async def test_background_processes_do_not_hold_the_call_or_outlive_it(unconfined_sandbox: Sandbox) -> None:
    sandbox = unconfined_sandbox  # host pids: no PID namespace
    text = await sandbox.tools.call("run_shell_command", command="sleep 300 & echo $! > bg.pid; echo started")
    assert "exit code 0" in text and "started" in text and "still held its output open" in text
    assert await wait_gone(int((sandbox.ws / "bg.pid").read_text()))


def test_timeouts_are_clamped() -> None:
    assert _shell.effective_timeout(None, 120.0) == 120.0
    assert _shell.effective_timeout(30, 120.0) == 30.0
    assert _shell.effective_timeout(10_000, 120.0) == 600.0
    assert _shell.effective_timeout(None, 9_999.0) == 600.0
    assert _shell.effective_timeout(0, 120.0) == 1.0


async def test_the_settings_timeout_is_the_default(sandbox: Sandbox) -> None:
    text = await sandbox.tools.call(
        "run_shell_command", command="sleep 30", settings={"local_tools": {"shell_timeout": 0.5}}
    )
    assert "timed out after 1 s" in text  # 0.5 is clamped up to the 1 s minimum


async def test_a_switched_off_shell_runs_nothing(sandbox: Sandbox, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(ToolExecutionError) as caught:
        await sandbox.tools.call(
            "run_shell_command", command=f"touch {marker}", settings={"local_tools": {"groups": ["files"]}}
        )
    assert caught.value.message == "tool run_shell_command is switched off for this session"
    assert not marker.exists()
