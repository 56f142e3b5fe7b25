"""Agents as tools: what the adapter refuses at build, and run states written before it
stepped sub-agents (their agent tool's step still runs the whole sub-agent)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, OpenAIResponsesModel, SQLiteSession, function_tool
from openai import AsyncOpenAI

from sessionflow import AgentToolCall, AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.kit import AgentEventWriter, DeferredToolExecution
from sessionflow_openai_agents import AgentGraphError, OpenAIAgentsRunner, openai_agents_session_flow
from sessionflow_openai_agents._agent_tools import AGENT_TOOL_STARTED


@function_tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def test_an_agent_tool_streaming_to_a_callback_is_refused() -> None:
    expert = Agent[Any](name="expert")
    tool = expert.as_tool(tool_name="ask_expert", tool_description="Ask.", on_stream=lambda event: None)
    with pytest.raises(AgentGraphError) as raised:
        openai_agents_session_flow(Agent[Any](name="main", tools=[tool]), flow_type="refused")
    assert "as_tool(on_stream=...)" in str(raised.value)


@pytest.mark.parametrize(
    "option",
    [
        {"previous_response_id": "resp_1"},
        {"conversation_id": "conv_1"},
        {"session": SQLiteSession(session_id="nested")},
    ],
    ids=["previous_response_id", "conversation_id", "session"],
)
def test_a_nested_run_that_needs_a_server_or_sdk_memory_is_refused(option: dict[str, Any]) -> None:
    expert = Agent[Any](name="expert")
    tool = expert.as_tool(tool_name="ask_expert", tool_description="Ask.", **option)
    with pytest.raises(AgentGraphError) as raised:
        openai_agents_session_flow(Agent[Any](name="main", tools=[tool]), flow_type="refused")
    (name,) = option
    assert f"as_tool({name}=...)" in str(raised.value)


def test_an_agent_that_is_its_own_tool_is_refused() -> None:
    agent = Agent[Any](name="main")
    agent.tools = [agent.as_tool(tool_name="ask_myself", tool_description="Ask.")]
    with pytest.raises(AgentGraphError, match="uses itself as a tool"):
        openai_agents_session_flow(agent, flow_type="refused")


def test_a_sub_agents_tool_named_like_another_is_refused() -> None:
    @function_tool(name_override="ping")
    def other_ping() -> str:
        """Another pong."""
        return "pong too"

    expert = Agent[Any](name="expert", tools=[other_ping])
    main = Agent[Any](
        name="main", tools=[ping, expert.as_tool(tool_name="ask_expert", tool_description="Ask.")]
    )
    with pytest.raises(AgentGraphError, match="different tools named 'ping'"):
        openai_agents_session_flow(main, flow_type="refused")


def test_a_nested_sub_agents_tool_named_like_another_is_refused() -> None:
    @function_tool(name_override="ping")
    def other_ping() -> str:
        """Another pong."""
        return "pong too"

    editor = Agent[Any](name="editor", tools=[other_ping])
    expert = Agent[Any](
        name="expert", tools=[editor.as_tool(tool_name="ask_editor", tool_description="Ask.")]
    )
    main = Agent[Any](
        name="main", tools=[ping, expert.as_tool(tool_name="ask_expert", tool_description="Ask.")]
    )
    with pytest.raises(AgentGraphError, match="different tools named 'ping'"):
        openai_agents_session_flow(main, flow_type="refused")


def _tool_step(run_state: str | None) -> DeferredToolExecution:
    call = AgentToolCall(
        tool_call_id="call_x",
        tool_name="ask_expert",
        arguments=json.dumps({"input": "Is 7 prime?"}),
        policy=ToolPolicy(effect=ToolEffect.READ),
        deferral_order=0,
        status=AgentToolCallStatus.RUNNING,
    )
    return DeferredToolExecution(
        flow_id="s",
        turn_id="turn-1",
        tool_call=call,
        attempt=1,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="turn-1/tool/call_x", attempt=1),
        heartbeat=lambda *args: None,
        run_state=run_state,
    )


def _runner(server: ScriptedModelServer, key: str) -> OpenAIAgentsRunner:
    client = AsyncOpenAI(base_url=server.base_url(key), api_key="k", max_retries=0)
    expert = Agent[Any](
        name="expert",
        instructions="You are the expert.",
        model=OpenAIResponsesModel(model="m", openai_client=client),
    )
    main = Agent[Any](name="main", tools=[expert.as_tool(tool_name="ask_expert", tool_description="Ask.")])
    return OpenAIAgentsRunner(main)


OLD_STATE = json.dumps({"format": "sessionflow-openai-agents/1", "input_from_messages": True, "state": {}})


async def test_a_state_from_before_runs_the_whole_sub_agent_in_the_tool_step(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script("old", [ModelReply.say("Yes, 7 is prime.")])
    result = await _runner(model_server, "old").execute_deferred_tool_call(_tool_step(OLD_STATE))

    assert result.output == "Yes, 7 is prime."
    assert len(model_server.requests("old")) == 1


async def test_a_state_that_steps_the_sub_agent_makes_no_model_call_in_the_tool_step(
    model_server: ScriptedModelServer,
) -> None:
    model_server.script("new", [ModelReply.say("Yes, 7 is prime.")])
    state = json.loads(OLD_STATE)
    state["agent_tools"] = {"call_x": {"tool": "ask_expert", "arguments": "{}", "run": None}}
    result = await _runner(model_server, "new").execute_deferred_tool_call(_tool_step(json.dumps(state)))

    assert result.output == AGENT_TOOL_STARTED
    assert model_server.requests("new") == []
