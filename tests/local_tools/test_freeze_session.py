"""A session's adversarial search on a real worker: the worker keeps heartbeating, the step runs once.

The worker's tool steps heartbeat every 0.3 s and time out after 2 s without one. A
search over 256 MiB of lines on which ``(a+)+$`` backtracks takes longer than that, so
it ends in one attempt only if the worker's event loop kept serving while it ran. (With
Python's ``re`` the search never ends and the loop stops with it.)
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sessionflow import AgentSnapshot, AgentStatus
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import AgentTestStack, wait_for_agent_snapshot
from tests.local_tools._session import (
    FLOW_TYPE_ENV,
    MODEL_URL_ENV,
    TIMINGS,
    WORKSPACE_ENV,
    local_tools_flow,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
LINE = b"a" * 64 + b"!\n"


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    async with ScriptedModelServer() as server:
        yield server


async def test_an_adversarial_search_keeps_the_worker_heartbeating(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    chunk = LINE * (4 * 1024 * 1024 // len(LINE))
    for index in range(64):
        (workspace / f"attack-{index:02}.txt").write_bytes(chunk)
    key = f"lt-freeze-{uuid.uuid4().hex[:8]}"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "search_files", {"pattern": "(a+)+$", "regex": True})),
            ModelReply.say("Searched."),
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

    def ended(s: AgentSnapshot) -> AgentSnapshot | None:
        state = s.state
        done = state and state.turn_count >= 1 and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        return s if done else None

    async with stack:
        await stack.start_worker()
        sessions = stack.sessions()
        started = time.monotonic()
        await sessions.start_session(key, "search")
        snapshot = await wait_for_agent_snapshot(
            sessions, key, ended, description="the turn to end", timeout=240
        )
        took = time.monotonic() - started
        steps = await stack.read_step_history(key)

    assert snapshot.messages[-1].message.text == "Searched."
    result = model_server.requests(key)[1].tool_results()["c1"]
    assert result.startswith("no matches") and "[searched 64 files]" in result, result[-300:]
    tool_steps = [s for s in steps if "Tool" in s.step_type]
    assert [(s.final_attempt, s.outcome) for s in tool_steps] == [(1, "completed")]
    # Else the search was too quick to prove anything about heartbeats.
    assert took > TIMINGS.tool_heartbeat_timeout.total_seconds(), took
