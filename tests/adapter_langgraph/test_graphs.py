"""The user's own StateGraph: extra nodes run inside the model step; a second model call continues."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.temporal import read_step_history
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.conftest import serving, turn_ended, unique
from tests.adapter_langgraph.flows import FlowSpec, build_flow


async def test_a_non_tool_node_runs_inside_the_model_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-counter")
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("c1", "lookup", {"city": "Rome"})),
            ModelReply.say("Rome is sunny."),
        ],
    )
    flow = build_flow(FlowSpec(flow_type=key, base_url=model_server.base_url(key), graph="counter"), tmp_path)
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "Weather in Rome?")
        snapshot = await turn_ended(sessions, key)
        steps = await read_step_history(sessions.client, key)

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert snapshot.messages[-1].message.text == "Rome is sunny."
    # `count` ran before each model call, inside the RunModel steps: no step of its own.
    assert [s.step_type for s in steps] == [
        "sessionflow.RunModel",
        "sessionflow.CallTool",
        "sessionflow.RunModel",
    ]
    requests = model_server.requests(key)
    assert len(requests) == 2
    assert requests[0].saw("count ran 1 times")
    # The second step restored `visits` from the checkpoint, then `count` ran again.
    assert requests[1].saw("count ran 2 times")
    assert requests[1].tool_results() == {"c1": "sunny in Rome"}
    assert [e["visits"] for e in InvocationLog(tmp_path / "invocations.jsonl").entries("model")] == [1, 2]


async def test_a_second_node_that_calls_the_model_runs_in_a_continued_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-twice")
    model_server.script(key, [ModelReply.say("a draft"), ModelReply.say("a review"), ModelReply.say("spare")])
    flow = build_flow(
        FlowSpec(flow_type=key, base_url=model_server.base_url(key), graph="two_calls"), tmp_path
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "write something")
        snapshot = await turn_ended(sessions, key)
        steps = await read_step_history(sessions.client, key)
        events = [e.type for e in (await sessions.list_agent_events(key)).events]

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    # `review` was stopped before its request in the first step and ran in the second,
    # from the checkpoint after `draft`: one request each, nothing repeated.
    requests = model_server.requests(key)
    assert len(requests) == 2
    assert requests[1].saw("a draft")
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "completed"),
        ("sessionflow.RunModel", 1, "completed"),
    ]
    assert "model_continued" in events
    assert [m.message.text for m in snapshot.messages] == ["write something", "a draft", "a review"]


async def test_one_node_that_calls_the_model_twice_fails_the_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-twice-one")
    model_server.script(key, [ModelReply.say("a draft"), ModelReply.say("a review")])
    flow = build_flow(
        FlowSpec(flow_type=key, base_url=model_server.base_url(key), graph="one_node_twice"), tmp_path
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "write something")
        snapshot = await turn_ended(sessions, key)
        steps = await read_step_history(sessions.client, key)

    assert snapshot.state is not None
    error = snapshot.state.last_turn_error or ""
    assert "second model call in one RunModel step" in error
    assert "node 'draft' called the model, then it called the model again in the same run" in error
    # The second call was stopped before its request was sent, and the step was not retried.
    assert len(model_server.requests(key)) == 1
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "failed")
    ]
    assert [m.message.text for m in snapshot.messages] == ["write something"]
