"""A turn whose run state an earlier adapter version wrote goes on under this one.

Version 1 (before parallel calls) kept one deferred call, ``{"deferred": {"id", "name"}}``,
and resumed by letting the CLI replay it. Version 2 keeps every call of the response and
writes their results into the transcript. For a response with one call the first step's
transcript is the same under both (the CLI defers the call either way), so a version 1
state is made here from that step by rewriting only its envelope, and the next step must
finish the turn with the recorded result as a plain tool result. Version 3 added
``cost_usd`` (the session's spending, for ``max_budget_usd``); a version 2 state, the same
without it, goes on with nothing spent. Version 4 added a sub-agent's ``context`` (what its
SubagentStart hooks answered); a version 3 state, which has none, goes on as written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from claude_agent_sdk import ClaudeAgentOptions

from sessionflow import AgentMessage, AgentToolCall, AgentToolCallStatus, MessageRole, ToolEffect, ToolPolicy
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import (
    AgentEventWriter,
    AgentTurnContext,
    FrameworkMessage,
    ToolCallsRequested,
    TurnCompleted,
)
from sessionflow_claude_agent_sdk import ClaudeAgentRunner


def turn(state: str | None, calls: dict[str, AgentToolCall]) -> AgentTurnContext:
    prompt = FrameworkMessage(
        role=MessageRole.USER, framework_item={"type": "user", "content": "go"}, text="go"
    )
    return AgentTurnContext(
        flow_id="versions",
        turn_id="turn-1",
        attempt=1,
        messages=[AgentMessage(sequence=1, turn_id="turn-1", message=prompt)],
        framework_run_state=state,
        tool_calls=calls,
        policy_resolver=lambda name, effect: ToolPolicy(effect=effect or ToolEffect.READ),
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="step", attempt=1),
        heartbeat=lambda *args, **kwargs: None,
    )


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_an_earlier_run_state_resumes(
    version: int, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("alpha\n")
    key = f"claude-run-state-v{version}"
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "Read", {"file_path": str(workspace / "notes.txt")})),
            ModelReply.say("done"),
        ],
    )
    options = ClaudeAgentOptions(
        model="scripted-model",
        cwd=str(workspace),
        env={"ANTHROPIC_BASE_URL": model_server.base_url(key, api="anthropic"), "ANTHROPIC_API_KEY": "x"},
    )
    runner = ClaudeAgentRunner(options, config_root=tmp_path / "config")

    first = await runner.run_model_step(turn(None, {}))
    assert isinstance(first, ToolCallsRequested)
    assert [c.tool_call_id for c in first.tool_calls] == ["c1"]
    current = cast(dict[str, Any], json.loads(first.framework_run_state))
    assert current["v"] == 4
    assert current["cost_usd"] > 0
    if version == 1:
        old = {
            "v": 1,
            "session_id": current["session_id"],
            "transcript": current["transcript"],
            "turn_base": current["turn_base"],
            "deferred": {"id": "c1", "name": "Read"},
        }
    elif version == 2:
        old = {**{k: v for k, v in current.items() if k != "cost_usd"}, "v": 2}
    else:
        old = {**current, "v": 3}
    record = AgentToolCall(
        tool_call_id="c1",
        tool_name="Read",
        arguments=first.tool_calls[0].arguments,
        policy=first.tool_calls[0].policy,
        deferral_order=0,
        status=AgentToolCallStatus.SUCCEEDED,
        output="1\talpha\n2\t",
    )
    second = await runner.run_model_step(turn(json.dumps(old), {"c1": record}))

    assert isinstance(second, TurnCompleted)
    assert second.new_messages[-1].text == "done"
    result = cast(dict[str, Any], (second.framework_state or {})["result"])
    if version == 3:
        # Version 3 carried the spending: both requests' cost.
        assert result["total_cost_usd"] > current["cost_usd"]
    else:
        # Only the second request's cost: the earlier state counted nothing.
        assert 0 < result["total_cost_usd"] < 2 * current["cost_usd"]
    requests = model_server.requests(key)
    assert len(requests) == 2
    last = cast(list[dict[str, Any]], requests[1].body["messages"])[-1]
    assert last["role"] == "user"
    assert [{k: v for k, v in b.items() if k != "cache_control"} for b in last["content"]] == [
        {"tool_use_id": "c1", "type": "tool_result", "content": "1\talpha\n2\t"}
    ]
