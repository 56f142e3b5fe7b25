"""The framework `openai-agents`: found through its entry point, built from the CLI's context
and from a conformance-style context (a wire API, no settings), against the scripted model server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
    connect,
    serve_agent_flows,
)
from sessionflow.builtin import tool
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import HarnessContext, ModelApi
from sessionflow.plugins import LOAD_PLUGINS_ENV, SessionflowPlugins, build_runner
from sessionflow.testing import wait_for_agent_snapshot
from sessionflow_openai_agents import OpenAIAgentsRunner
from tests.adapter_openai.scenarios import TIMINGS


def lookup(city: str) -> str:
    """Look up the weather."""
    return f"rain in {city}"


def plugins() -> SessionflowPlugins:
    """Only this adapter's entry point, so other adapters' plugins cannot interfere."""
    loaded = SessionflowPlugins()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(LOAD_PLUGINS_ENV, "openai-agents")
        loaded.load()
    return loaded


def test_the_entry_point_registers_openai_agents() -> None:
    spec = plugins().framework("openai-agents")
    assert spec.plugin_name == "openai-agents"
    assert spec.model_api == "responses"
    assert spec.capabilities.parallel_tool_calls and spec.capabilities.reasoning_deltas
    assert spec.capabilities.images and spec.capabilities.mcp_annotations
    assert spec.capabilities.continue_steps
    assert spec.capabilities.verified_outcomes


def conformance_context(model_base_url: str, api: ModelApi | None, **changes: Any) -> HarnessContext:
    """A context like the conformance suite's: its model server, a wire API, no settings."""
    values: dict[str, Any] = {
        "flow_type": "plugin-conformance",
        "model": "scripted",
        "system_prompt": None,
        "workspace": Path("/tmp"),
        "options": AgentSessionOptions(),
        "tools": [],
        "settings": {},
        "model_base_url": model_base_url,
        "api_key": "test",
        "api": api,
        "framework_tools": False,
    }
    return HarnessContext(**{**values, **changes})


def test_anthropic_messages_is_refused() -> None:
    spec = plugins().framework("openai-agents")
    with pytest.raises(ValueError, match="anthropic_messages"):
        spec.build_runner(conformance_context("http://127.0.0.1:1/v1", "anthropic_messages"))


async def serve_one_turn(
    temporal_address: str, flow: AgentSessionFlow, session_id: str, text: str
) -> AgentSnapshot:
    client = await connect(temporal_address)
    sessions = AgentSessionClient(client, flow)
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        await sessions.start_session(session_id, text)

        def idle(s: AgentSnapshot) -> AgentSnapshot | None:
            done = s.state is not None and s.state.turn_count == 1
            return s if done and s.state and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE else None

        return await wait_for_agent_snapshot(sessions, session_id, idle, description="the turn to end")
    finally:
        stop.set()
        await worker


@pytest.mark.parametrize("api", ["responses", "chat_completions"])
async def test_the_contexts_api_picks_the_wire_api(
    temporal_address: str, model_server: ScriptedModelServer, api: Any
) -> None:
    key = f"plugin-conformance-{api}"
    model_server.script(
        key,
        [ModelReply.call(ScriptedToolCall("call_1", "lookup", {"city": "Bergen"})), ModelReply.say("Rainy.")],
    )
    context = conformance_context(
        model_server.base_url(key),
        api,
        system_prompt="Be brief.",
        tools=[tool(lookup, effect=ToolEffect.READ)],
        # The context's API wins over the setting.
        settings={"api": "chat_completions" if api == "responses" else "responses"},
    )
    runner = build_runner(plugins().framework("openai-agents"), context)
    flow = AgentSessionFlow(runner, flow_type=key, options=AgentSessionOptions(timings=TIMINGS))
    snapshot = await serve_one_turn(temporal_address, flow, key, "Weather in Bergen?")

    assert snapshot.messages[-1].message.text == "Rainy."
    requests = model_server.requests(key)
    assert [r.api for r in requests] == [api, api]
    assert requests[0].sent_texts()[0] == "Be brief."
    assert requests[1].tool_results() == {"call_1": "rain in Bergen"}


async def test_the_cli_runner_uses_the_base_url_key_and_settings(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "plugin-cli"
    model_server.script(key, [ModelReply.say("Hi there.")])
    spec = plugins().framework("openai-agents")
    ctx = HarnessContext(
        flow_type=key,
        model="gpt-test",
        system_prompt="You help.",
        workspace=tmp_path,
        options=AgentSessionOptions(timings=TIMINGS),
        tools=[tool(lookup)],
        settings={"api": "chat_completions"},
        model_base_url=model_server.base_url(key),
        api_key="sk-cli",
    )
    flow = AgentSessionFlow(build_runner(spec, ctx), flow_type=key, options=ctx.options)
    assert isinstance(flow.runner, OpenAIAgentsRunner)
    snapshot = await serve_one_turn(temporal_address, flow, key, "hello")

    assert snapshot.messages[-1].message.text == "Hi there."
    (request,) = model_server.requests(key)
    assert request.api == "chat_completions" and request.model == "gpt-test"
    assert request.headers["authorization"] == "Bearer sk-cli"
    assert request.tool_names() == ["lookup"]
