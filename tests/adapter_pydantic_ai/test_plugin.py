"""The `pydantic-ai` framework plugin: discovery, the harness runner, the wire API a context asks for."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.builtin import tool
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import HarnessContext, ModelApi
from sessionflow.plugins import SessionflowPlugins, build_runner
from sessionflow_pydantic_ai import PydanticAIRunner, build_model
from tests.adapter_pydantic_ai.turns import play_turn


def lookup(city: str) -> str:
    """Look up the weather."""
    return f"sunny in {city}"


def test_the_entry_point_registers_pydantic_ai() -> None:
    plugins = SessionflowPlugins()
    plugins.load()
    spec = plugins.framework("pydantic-ai")
    assert spec.model_api == "chat_completions"
    assert spec.capabilities.parallel_tool_calls and spec.capabilities.reasoning_deltas
    assert spec.capabilities.mcp_annotations


async def test_the_harness_runner_talks_to_the_configured_endpoint(
    model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "harness"
    model_server.script(
        key, [ModelReply.call(ScriptedToolCall("c1", "lookup", {"city": "Oslo"})), ModelReply.say("Sunny.")]
    )
    spec = tool(lookup, policy=ToolPolicy(effect=ToolEffect.READ))
    ctx = HarnessContext(
        flow_type="PydanticAIHarness",
        model="harness-model",
        system_prompt="You are the harness agent.",
        workspace=tmp_path,
        options=AgentSessionOptions(),
        tools=[spec],
        settings={"api": "responses"},
        model_base_url=model_server.base_url(key),
        api_key="sk-harness",
    )
    plugins = SessionflowPlugins()
    plugins.load()
    runner = build_runner(plugins.framework("pydantic-ai"), ctx)
    assert isinstance(runner, PydanticAIRunner)
    played = await play_turn(runner, "weather?")
    assert played.completed.new_messages[-1].text == "Sunny."
    first = model_server.requests(key)[0]
    assert (first.api, first.model, first.headers["authorization"]) == (
        "responses",
        "harness-model",
        "Bearer sk-harness",
    )
    assert first.saw("You are the harness agent.") and first.tool_names() == ["lookup"]


@pytest.mark.parametrize(
    ("api", "wire"),
    [("chat_completions", "openai"), ("responses", "openai"), ("anthropic_messages", "anthropic")],
)
async def test_the_runner_speaks_the_api_the_context_asks_for(
    model_server: ScriptedModelServer, api: ModelApi, wire: str, tmp_path: Path
) -> None:
    key = f"conformance-{api}"
    model_server.script(key, [ModelReply.say("hello")])
    plugins = SessionflowPlugins()
    plugins.load()
    ctx = HarnessContext(
        flow_type="PydanticAIConformance",
        model="scripted-model",
        system_prompt="Be kind.",
        workspace=tmp_path,
        options=AgentSessionOptions(),
        tools=[],
        settings={},
        model_base_url=model_server.base_url(key, wire),
        api_key="test",
        api=api,
        framework_tools=False,
    )
    runner = build_runner(plugins.framework("pydantic-ai"), ctx)
    assert isinstance(runner, PydanticAIRunner)
    played = await play_turn(runner, "hi")
    assert played.completed.new_messages[-1].text == "hello"
    [request] = model_server.requests(key)
    assert request.api == api and request.saw("Be kind.") and request.stream


def test_build_model_resolves_names_like_pydantic_ai() -> None:
    assert build_model("anthropic:claude-sonnet-4-5") == "anthropic:claude-sonnet-4-5"
    assert build_model("google-gla:gemini-2.5-pro") == "google-gla:gemini-2.5-pro"
    local = build_model("llama3:8b", base_url="http://127.0.0.1:11434/v1", api_key="none")
    assert isinstance(local, OpenAIChatModel) and local.model_name == "llama3:8b"
    responses = build_model("openai:gpt-5", api_key="sk-x")
    assert isinstance(responses, OpenAIResponsesModel) and responses.model_name == "gpt-5"
    claude = build_model("anthropic:claude-sonnet-4-5", base_url="http://127.0.0.1:9/", api_key="x")
    assert isinstance(claude, AnthropicModel)
    assert isinstance(
        build_model("m", api="anthropic_messages", base_url="http://127.0.0.1:9/", api_key="x"),
        AnthropicModel,
    )
