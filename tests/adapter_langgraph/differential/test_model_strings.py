"""``"provider:model"`` strings: LangChain's `init_chat_model` reads them, in a graph and in the flow.

The provider reads its key and URL from its own environment variables, as LangChain's
docs show (``OPENAI_API_KEY``; ``OPENAI_BASE_URL`` points it at the scripted server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from sessionflow import AgentSessionOptions, ToolEffect, UnsupportedOptionError
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from sessionflow_langgraph import langgraph_session_flow
from sessionflow_langgraph._model_strings import model_from_string
from sessionflow_langgraph._openai_compat import ChatOpenAICompatible
from tests.adapter_langgraph.conftest import serving, turn_ended, unique
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import (
    Built,
    Compiled,
    GraphBuilder,
    Scenario,
    assert_same_run,
    run_both,
)
from tests.adapter_langgraph.flows import FAST

SCRIPT = [
    ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
    ModelReply.say("It's always sunny in sf!"),
]


def string_model_agent(monkeypatch: pytest.MonkeyPatch) -> GraphBuilder:
    """`create_agent("openai:gpt-test", ...)`, its provider pointed at the run's scripted key."""

    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        assert isinstance(model, ChatOpenAI)
        monkeypatch.setenv("OPENAI_BASE_URL", str(model.openai_api_base))
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        tools = [get_weather(log)]
        graph = cast(Compiled, create_agent("openai:gpt-test", tools=tools, checkpointer=checkpointer))
        return Built(graph, tools)

    return build


async def test_create_agent_with_a_provider_model_string(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = Scenario(
        name="model-string", build=string_model_agent(monkeypatch), script=SCRIPT, turns=["weather in sf?"]
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [request["model"] for request in plain.requests] == ["gpt-test", "gpt-test"]
    assert_same_run(plain, session)


async def test_the_flow_takes_a_provider_model_string(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = unique("lg-model-string")
    model_server.script(key, SCRIPT)
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.base_url(key))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    log = InvocationLog(tmp_path / "runs.jsonl")
    flow = langgraph_session_flow(
        flow_type=key,
        model="openai:gpt-test",
        tools=[get_weather(log)],
        options=AgentSessionOptions(timings=FAST, default_tool_effect=ToolEffect.READ),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "weather in sf?")
        snapshot = await turn_ended(sessions, key)

    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert snapshot.messages[-1].message.text == "It's always sunny in sf!"
    requests = model_server.requests(key)
    assert [r.model for r in requests] == ["gpt-test", "gpt-test"]
    assert requests[1].tool_results() == {"call_sf": "It's always sunny in sf!"}
    assert log.count("tool", "get_weather") == 1


def test_a_string_is_langchains_model_without_sdk_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")

    openai = model_from_string("openai:gpt-test")
    inferred = model_from_string("gpt-test")
    anthropic = model_from_string("anthropic:claude-test")

    # LangChain's own classes, not the plugin's ChatOpenAICompatible.
    assert type(openai) is ChatOpenAI and not isinstance(openai, ChatOpenAICompatible)
    assert type(inferred) is ChatOpenAI
    assert type(anthropic).__name__ == "ChatAnthropic"
    assert [cast(Any, m).max_retries for m in (openai, inferred, anthropic)] == [0, 0, 0]
    assert (openai.model_name, inferred.model_name) == ("gpt-test", "gpt-test")


def test_a_string_langchain_cannot_build_is_refused_naming_the_model_option() -> None:
    with pytest.raises(UnsupportedOptionError) as missing:
        # langchain-groq is not installed here.
        langgraph_session_flow(flow_type="unused", model="groq:llama-3.3-70b")
    assert missing.value.option == "model"
    assert "langchain_groq" in str(missing.value) or "langchain-groq" in str(missing.value)

    with pytest.raises(UnsupportedOptionError) as unknown:
        model_from_string("llama3:8b")
    assert unknown.value.option == "model"
    assert "Unable to infer model provider" in str(unknown.value)
