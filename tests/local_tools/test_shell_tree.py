"""The shell tool kills the whole process tree, even a grandchild that left with `setsid`.

``setsid`` gives a process a session and process group of its own, so killing the
command's process group misses it; the tool's wrapper is a child subreaper, so the
grandchild stays in its tree and is killed on timeout, on cancel, at the end of the call,
and when the worker itself dies.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.local_tools.conftest import Sandbox
from tests.local_tools.test_shell import wait_gone


@pytest.fixture
def sandbox(unconfined_sandbox: Sandbox) -> Sandbox:
    """Commands outside bubblewrap: the pids they write must be the host's (no PID
    namespace). The sandboxed tree is tested in test_shell_sandbox."""
    return unconfined_sandbox


REPO_ROOT = Path(__file__).resolve().parents[2]
# The grandchild leaves the command's session and process group, then sleeps.
# It writes its pid and its session id (field 6 of /proc/PID/stat).
ESCAPER = (
    'setsid sh -c \'echo $$ $(cut -d" " -f6 /proc/$$/stat) > escaped.tmp; mv escaped.tmp escaped.pid; '
    "exec sleep 300' > /dev/null 2>&1 < /dev/null &"
)


async def _escaped_pid(sandbox: Sandbox) -> int:
    path = sandbox.ws / "escaped.pid"
    deadline = time.monotonic() + 20
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, "the setsid grandchild never started"
        await asyncio.sleep(0.02)
    pid, session = map(int, path.read_text().split())
    assert session == pid != os.getsid(0), "the grandchild did not get a session of its own"
    return pid


async def test_a_timeout_kills_a_setsid_grandchild(sandbox: Sandbox) -> None:
    text = await sandbox.tools.call("run_shell_command", command=f"{ESCAPER} sleep 300", timeout_seconds=3)
    assert "timed out after 3 s" in text
    assert await wait_gone(await _escaped_pid(sandbox)), "the setsid grandchild survived the timeout"


async def test_a_cancel_kills_a_setsid_grandchild(sandbox: Sandbox) -> None:
    task = asyncio.create_task(sandbox.tools.call("run_shell_command", command=f"{ESCAPER} sleep 300"))
    pid = await _escaped_pid(sandbox)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(pid), "the setsid grandchild survived the cancel"


async def test_the_end_of_the_call_kills_a_setsid_grandchild(sandbox: Sandbox) -> None:
    started = f"{ESCAPER} while [ ! -e escaped.pid ]; do sleep 0.05; done; echo started"
    text = await sandbox.tools.call("run_shell_command", command=started)
    assert "exit code 0" in text and "started" in text
    assert await wait_gone(await _escaped_pid(sandbox)), "the setsid grandchild outlived the call"


async def test_a_double_forked_grandchild_is_killed_too(sandbox: Sandbox) -> None:
    command = f"(sh -c {shlex.quote(ESCAPER)} &) ; sleep 300"
    text = await sandbox.tools.call("run_shell_command", command=command, timeout_seconds=3)
    assert "timed out" in text
    assert await wait_gone(await _escaped_pid(sandbox))


WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from sessionflow_local_tools import run_shell_command
    asyncio.run(run_shell_command(sys.argv[2], Path(sys.argv[1]), 600))
    """
)


async def test_a_killed_worker_leaves_no_grandchild_behind(sandbox: Sandbox) -> None:
    worker = subprocess.Popen(  # noqa: ASYNC220  (started once; the test waits on files, not on it)
        [sys.executable, "-c", WORKER, str(sandbox.ws), f"{ESCAPER} sleep 300"], cwd=REPO_ROOT
    )
    try:
        pid = await _escaped_pid(sandbox)
    finally:
        worker.send_signal(signal.SIGKILL)  # no cleanup code of the worker runs
        worker.wait(timeout=30)
    # The wrapper sees its control pipe close and kills the tree.
    assert await wait_gone(pid, timeout=20), "the setsid grandchild outlived its worker"
