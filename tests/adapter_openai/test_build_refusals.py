"""Tools the adapter cannot honour: refused when the flow is built, or after one attempt."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from agents import (
    Agent,
    LocalShellTool,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    SQLiteSession,
    WebSearchTool,
    function_tool,
)
from agents.run_config import SandboxRunConfig, ToolExecutionConfig
from agents.sandbox import SandboxAgent
from openai import AsyncOpenAI

from sessionflow import AgentSessionOptions, UnsupportedOptionError
from sessionflow.demo import ScriptedModelServer
from sessionflow_openai_agents import AgentGraphError, openai_agents_session_flow
from tests.build_refusals import first_turn_error
from tests.harness import FAST


@function_tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def client(base_url: str = "http://127.0.0.1:9/v1") -> AsyncOpenAI:
    return AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)


def chat_model(base_url: str = "http://127.0.0.1:9/v1") -> OpenAIChatCompletionsModel:
    return OpenAIChatCompletionsModel(model="scripted", openai_client=client(base_url))


def refused(agent: Agent[Any], **runner_args: Any) -> UnsupportedOptionError:
    with pytest.raises(UnsupportedOptionError) as raised:
        openai_agents_session_flow(agent, flow_type="refused", **runner_args)
    assert isinstance(raised.value, AgentGraphError)
    return raised.value


def test_an_in_process_tool_is_refused_by_its_index() -> None:
    shell = LocalShellTool(executor=lambda request: "")
    error = refused(Agent[Any](name="start", tools=[ping, shell]))
    assert error.option == "tools[1]"
    assert str(error).startswith("option 'tools[1]': agent 'start': LocalShellTool runs in-process")


def test_a_hosted_tool_on_a_chat_completions_model_is_refused() -> None:
    error = refused(Agent[Any](name="start", model=chat_model(), tools=[ping, WebSearchTool()]))
    assert error.option == "tools[1]"
    assert "WebSearchTool is a hosted tool, and the agent's model speaks Chat Completions" in str(error)


def test_the_run_configs_model_decides_which_api_the_agent_speaks() -> None:
    agent = Agent[Any](name="start", tools=[WebSearchTool()])
    assert refused(agent, run_config=RunConfig(model=chat_model())).option == "tools[0]"
    responses = OpenAIResponsesModel(model="scripted", openai_client=client())
    openai_agents_session_flow(agent, flow_type="ok", run_config=RunConfig(model=responses))
    # A model by name goes through the provider: not knowable without building a client.
    openai_agents_session_flow(agent, flow_type="ok", run_config=RunConfig(model="gpt-4.1"))


def test_an_sdk_session_memory_is_refused_the_session_is_the_memory() -> None:
    memory = SQLiteSession(session_id="conversation_123")
    try:
        error = refused(Agent[Any](name="start", tools=[ping]), session=memory)
    finally:
        memory.close()
    assert error.option == "session"
    assert str(error).startswith("option 'session': SQLiteSession is a second conversation memory")


def test_run_settings_a_session_cannot_honour_are_refused_with_the_reason() -> None:
    agent = Agent[Any](name="start", tools=[ping])
    bounded = RunConfig(tool_execution=ToolExecutionConfig(max_function_tool_concurrency=1))
    error = refused(agent, run_config=bounded)
    assert error.option == "run_config.tool_execution.max_function_tool_concurrency"
    assert "a bound in one process bounds nothing" in error.why
    early = RunConfig(tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=True))
    error = refused(agent, run_config=early)
    assert error.option == "run_config.tool_execution.pre_approval_tool_input_guardrails"
    assert "once, in its tool step right before the tool runs" in error.why
    error = refused(agent, run_config=RunConfig(sandbox=SandboxRunConfig()))
    assert error.option == "run_config.sandbox"
    error = refused(SandboxAgent[Any](name="sandboxed", tools=[ping]))
    assert error.option == "agent" and "SandboxAgent" in error.why
    # The defaults are honoured: an empty tool_execution config is no setting.
    openai_agents_session_flow(
        agent, flow_type="ok", run_config=RunConfig(tool_execution=ToolExecutionConfig())
    )


async def test_a_tool_only_a_later_factory_call_shows_fails_the_turn_after_one_attempt(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = f"oai-refused-{uuid.uuid4().hex[:10]}"
    model = chat_model(model_server.base_url(key))
    calls = 0

    def agent_factory() -> Agent[Any]:
        # The build sees a plain agent; the step's own call adds the hosted tool.
        nonlocal calls
        calls += 1
        tools: list[Any] = [ping] if calls == 1 else [ping, WebSearchTool()]
        return Agent[Any](name="start", model=model, tools=tools)

    flow = openai_agents_session_flow(agent_factory, flow_type=key, options=AgentSessionOptions(timings=FAST))
    error, steps = await first_turn_error(temporal_address, flow, key, model_server)
    assert "option 'tools[1]'" in error
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "failed")
    ]
