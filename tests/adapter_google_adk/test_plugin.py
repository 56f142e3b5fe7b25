"""The `google-adk` framework plugin: discovery, and the harness runner on the scripted
Gemini server with a neutral tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionflow import AgentSessionFlow, AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.builtin import tool
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import HarnessContext, ModelApi
from sessionflow.plugins import SessionflowPlugins, build_runner
from sessionflow_google_adk import GoogleAdkRunner
from tests.adapter_google_adk.agents import TIMINGS
from tests.adapter_google_adk.test_sessions import idle, serving


def lookup(city: str) -> str:
    """Look up the weather."""
    return f"sunny in {city}"


def harness_context(tmp_path: Path, base_url: str, api: ModelApi | None = None) -> HarnessContext:
    return HarnessContext(
        flow_type="AdkHarness",
        model="gemini-harness",
        system_prompt="You are the harness agent.",
        workspace=tmp_path,
        options=AgentSessionOptions(timings=TIMINGS),
        tools=[tool(lookup, policy=ToolPolicy(effect=ToolEffect.READ))],
        settings={},
        model_base_url=base_url,
        api_key="k-harness",
        api=api,
    )


def test_the_entry_point_registers_google_adk() -> None:
    plugins = SessionflowPlugins()
    plugins.load()
    spec = plugins.framework("google-adk")
    assert spec.model_api == "gemini"
    capabilities = spec.capabilities
    assert capabilities.parallel_tool_calls and capabilities.images and capabilities.framework_approvals
    # Every capability: the conformance suite plays each case (tests/conformance).
    assert capabilities.verified_outcomes and capabilities.steering and capabilities.carry_state
    assert capabilities.continue_steps and capabilities.tool_state


def test_another_wire_api_is_refused(tmp_path: Path) -> None:
    plugins = SessionflowPlugins()
    plugins.load()
    context = harness_context(tmp_path, "http://127.0.0.1:9", api="responses")
    with pytest.raises(Exception, match="speaks Gemini's generateContent, not responses"):
        build_runner(plugins.framework("google-adk"), context)


async def test_the_harness_runner_runs_a_neutral_tool_on_gemini(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = "adk-harness"
    model_server.script(
        key, [ModelReply.call(ScriptedToolCall("c1", "lookup", {"city": "Oslo"})), ModelReply.say("Sunny.")]
    )
    plugins = SessionflowPlugins()
    plugins.load()
    context = harness_context(tmp_path, model_server.base_url(key, api="gemini"))
    runner = build_runner(plugins.framework("google-adk"), context)
    assert isinstance(runner, GoogleAdkRunner)
    flow = AgentSessionFlow(runner, flow_type="adk-harness", options=context.options)
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, "weather?")
        snapshot = await idle(sessions, key)
    first, second = model_server.requests(key)
    assert (first.api, first.model, first.headers["x-goog-api-key"]) == (
        "gemini",
        "gemini-harness",
        "k-harness",
    )
    # ADK adds the agent's identity after the instruction, as in a plain run.
    system, user = first.sent_texts()
    assert system.startswith("You are the harness agent.") and user == "weather?"
    assert first.tool_names() == ["lookup"]
    assert second.tool_results() == {"c1": "sunny in Oslo"}
    assert snapshot.messages[-1].message.text == "Sunny."
