"""Flow build checks: unique agent and tool names, no in-process tools; tool source policies."""

from __future__ import annotations

from typing import Any

import pytest
from agents import (
    Agent,
    FunctionTool,
    Handoff,
    HostedMCPTool,
    LocalShellTool,
    RunContextWrapper,
    function_tool,
    handoff,
)
from agents.tool_context import ToolContext

from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.builtin import tool
from sessionflow_openai_agents import AgentGraphError, openai_agents_session_flow
from sessionflow_openai_agents._graph import AgentGraph
from sessionflow_openai_agents._hooks import StepHookPlan


@function_tool
def ping() -> str:
    """Ping."""
    return "pong"


def note(text: str) -> str:
    """Note something."""
    return text


def test_two_agents_with_one_name_are_refused() -> None:
    twin = Agent[Any](name="helper")
    start = Agent[Any](name="start", handoffs=[Agent[Any](name="helper", handoffs=[handoff(twin)])])
    with pytest.raises(AgentGraphError, match="two different agents are named 'helper'"):
        openai_agents_session_flow(start, flow_type="graph-dup")


def test_an_agent_reached_twice_is_one_agent() -> None:
    shared = Agent[Any](name="shared", tools=[ping])
    start = Agent[Any](name="start", tools=[ping], handoffs=[shared, handoff(shared)])
    shared.handoffs = [start]
    flow = openai_agents_session_flow(start, flow_type="graph-shared")
    assert flow.flow_type == "graph-shared"


def test_different_tools_with_one_name_are_refused() -> None:
    @function_tool(name_override="ping")
    def other_ping() -> str:
        return "other"

    start = Agent[Any](name="start", tools=[ping], handoffs=[Agent[Any](name="b", tools=[other_ping])])
    with pytest.raises(AgentGraphError, match="different tools named 'ping'"):
        openai_agents_session_flow(start, flow_type="graph-tools")


def test_in_process_tools_are_refused() -> None:
    shell = LocalShellTool(executor=lambda request: "")
    with pytest.raises(AgentGraphError, match="LocalShellTool runs in-process"):
        openai_agents_session_flow(Agent[Any](name="start", tools=[shell]), flow_type="graph-shell")


def test_tool_source_policies_fill_in_unless_options_have_one() -> None:
    options = AgentSessionOptions(tool_policies={"b": ToolPolicy(effect=ToolEffect.READ)})
    flow = openai_agents_session_flow(
        Agent[Any](name="start"),
        flow_type="graph-policies",
        options=options,
        tool_sources=[
            tool(note, name="a", policy=ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)),
            tool(note, name="b", policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)),
            tool(note, name="c"),
        ],
    )
    assert flow.options.tool_policies == {
        "a": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE),
        "b": ToolPolicy(effect=ToolEffect.READ),
    }


async def test_every_tool_of_the_clone_is_gated() -> None:
    docs = HostedMCPTool(
        tool_config={
            "type": "mcp",
            "server_label": "docs",
            "server_url": "https://mcp.invalid",
            "require_approval": {"always": {"tool_names": ["delete_page"]}},
        }
    )
    never = HostedMCPTool(
        tool_config={
            "type": "mcp",
            "server_label": "wiki",
            "server_url": "https://mcp.invalid",
            "require_approval": "never",
        }
    )
    helper = Agent[Any](name="helper", tools=[ping, never])
    start = Agent[Any](name="start", tools=[docs, ping], handoffs=[handoff(helper)])
    snapshot = await AgentGraph(start).snapshot(RunContextWrapper(context=None))
    plan = StepHookPlan(starts_agent=True)
    clone = snapshot.gated({"call_1": "recorded"}, plan)

    gated_docs, gated_ping = clone.tools
    assert isinstance(gated_docs, HostedMCPTool) and isinstance(gated_ping, FunctionTool)
    assert (
        gated_docs.tool_config.get("require_approval") == "always" and gated_docs.on_approval_request is None
    )
    assert docs.tool_config.get("require_approval") == {"always": {"tool_names": ["delete_page"]}}
    # A server that never asks is the provider's to run, as in the plain SDK: no step holds it.
    helper_clone = snapshot.gated({}, plan, "helper")
    gated_never = next(t for t in helper_clone.tools if isinstance(t, HostedMCPTool))
    assert gated_never.tool_config.get("require_approval") == "never"
    assert gated_ping.needs_approval is True and ping.needs_approval is False
    context = ToolContext(context=None, tool_name="ping", tool_call_id="call_1", tool_arguments="{}")
    assert await gated_ping.on_invoke_tool(context, "{}") == "recorded"
    # The handoff leads to the helper's clone, whose tools are gated as well.
    (redirected,) = clone.handoffs
    assert isinstance(redirected, Handoff)
    target = await redirected.on_invoke_handoff(RunContextWrapper(context=None), "")
    assert target is not helper and target.name == "helper"
    helper_ping, _ = target.tools
    assert isinstance(helper_ping, FunctionTool) and helper_ping.needs_approval is True
