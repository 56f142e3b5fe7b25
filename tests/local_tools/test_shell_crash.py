"""A worker SIGKILLed while a shell command runs: `outcome_unknown`, and the command never runs again."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sessionflow import AgentEventType, AgentSnapshot, AgentStatus, AgentToolCallStatus
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import AgentTestStack, wait_for_agent_snapshot, wait_until
from tests.local_tools._session import FLOW_TYPE_ENV, MODEL_URL_ENV, WORKSPACE_ENV, local_tools_flow
from tests.local_tools.conftest import processes_with

REPO_ROOT = Path(__file__).resolve().parents[2]
MARKER = "lt-shell-crash-marker"
# The marker is in the shell's command line, so the cleanup finds it on the host even when
# it ran in a PID namespace (bubblewrap), where $$ is not its host pid.
COMMAND = f"echo ran >> marker; sleep 60; : {MARKER}"


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def test_sigkill_during_a_shell_command_never_runs_it_twice(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    key = f"lt-shell-{uuid.uuid4().hex[:8]}"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "run_shell_command", {"command": COMMAND})),
            ModelReply.say("I will check whether it ran."),
        ],
    )
    flow = local_tools_flow(f"flow-{key}", workspace, model_server.base_url(key))
    env = {
        FLOW_TYPE_ENV: flow.flow_type,
        WORKSPACE_ENV: str(workspace),
        MODEL_URL_ENV: model_server.base_url(key),
    }
    stack = AgentTestStack(
        tmp_path / "state",
        [flow],
        "tests.local_tools.local_tools_worker",
        worker_cwd=REPO_ROOT,
        worker_env=env,
        server_address=temporal_address,
    )
    async with stack:
        await stack.start_worker()
        sessions = stack.sessions()
        try:
            # On the allow list, so it runs without approval.
            await sessions.start_session(key, "run it", settings={"local_tools": {"shell_allow": [COMMAND]}})
            await wait_until("the command to start", lambda: (workspace / "marker").exists())
            stack.workers[-1].kill()
            await stack.start_worker()

            def ended(s: AgentSnapshot) -> AgentSnapshot | None:
                state = s.state
                done = (
                    state and state.turn_count >= 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
                )
                return s if done else None

            snapshot = await wait_for_agent_snapshot(
                sessions, key, ended, description="the turn to end", timeout=60
            )
            assert snapshot.messages[-1].message.text == "I will check whether it ran."
            events = (await sessions.list_agent_events(key)).events
            finished = [e.data for e in events if e.type is AgentEventType.TOOL_CALL_FINISHED]
            assert [(f["tool_name"], f["status"]) for f in finished] == [
                ("run_shell_command", AgentToolCallStatus.OUTCOME_UNKNOWN.value)
            ]
            assert not [
                e for e in events if e.type is AgentEventType.INTERRUPT_RAISED
            ]  # allowed: no approval
            assert (workspace / "marker").read_text() == "ran\n"  # exactly once
            result = model_server.requests(key)[1].tool_results()["c1"]
            assert result.startswith("The outcome of this tool call is unknown")
            steps = await stack.read_step_history(key)
            assert (steps[1].step_type, steps[1].final_attempt, steps[1].outcome) == (
                "sessionflow.CallSingleAttemptTool",
                1,
                "timed_out",
            )
        finally:
            # Should the command outlive the worker (its own session), end it here.
            for pid in processes_with(MARKER):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
