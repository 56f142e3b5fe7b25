"""Every adapter's `*_session_flow` passes `AgentSessionFlow`'s arguments on and merges policies once."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Unpack

import pytest

from sessionflow import AgentSessionFlow, AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.builtin import tool
from sessionflow.kit import FlowArguments, InProcessDeltaBus, ToolSpec, merge_tool_policies
from sessionflow.testing import ScriptedRunner

# A model that is never called: the tests only build flows.
_NOWHERE = "http://127.0.0.1:9/v1"

FlowBuilder = Callable[..., AgentSessionFlow]


def _openai(tool_sources: Sequence[ToolSpec], **flow_args: Unpack[FlowArguments]) -> AgentSessionFlow:
    from agents import Agent

    from sessionflow_openai_agents import openai_agents_session_flow

    return openai_agents_session_flow(
        Agent[Any](name="start"), flow_type="builder-openai", tool_sources=tool_sources, **flow_args
    )


def _pydantic_ai(tool_sources: Sequence[ToolSpec], **flow_args: Unpack[FlowArguments]) -> AgentSessionFlow:
    from pydantic_ai import Agent

    from sessionflow_pydantic_ai import model_for_api, pydantic_ai_session_flow

    agent = Agent(model_for_api("chat_completions", "m", base_url=_NOWHERE, api_key="k"))
    return pydantic_ai_session_flow(agent, flow_type="builder-pai", tool_sources=tool_sources, **flow_args)


def _langgraph(tool_sources: Sequence[ToolSpec], **flow_args: Unpack[FlowArguments]) -> AgentSessionFlow:
    from sessionflow_langgraph import chat_model, langgraph_session_flow

    return langgraph_session_flow(
        flow_type="builder-langgraph",
        model=chat_model("m", base_url=_NOWHERE, api_key="k"),
        tool_sources=tool_sources,
        **flow_args,
    )


def _claude(tool_sources: Sequence[ToolSpec], **flow_args: Unpack[FlowArguments]) -> AgentSessionFlow:
    from claude_agent_sdk import ClaudeAgentOptions

    from sessionflow_claude_agent_sdk import claude_agent_session_flow

    return claude_agent_session_flow(
        ClaudeAgentOptions(), flow_type="builder-claude", tool_sources=tool_sources, **flow_args
    )


BUILDERS = pytest.mark.parametrize(
    "build",
    [_openai, _pydantic_ai, _langgraph, _claude],
    ids=["openai", "pydantic-ai", "langgraph", "claude"],
)


async def note(text: str) -> str:
    """Keep a note."""
    return text


@BUILDERS
def test_every_builder_passes_the_flow_arguments_on(build: FlowBuilder) -> None:
    # openai-agents and pydantic-ai used to accept no delta transport and no history limit.
    transport = InProcessDeltaBus()
    options = AgentSessionOptions(default_tool_effect=ToolEffect.READ)
    flow = build(
        (),
        options=options,
        continue_as_new_after_events=123,
        delta_transport=transport,
        delta_fallback=False,
    )
    assert flow.options == options
    assert flow.continue_as_new_after_events == 123
    assert flow.delta_transport is transport
    assert flow.delta_fallback is False


@BUILDERS
def test_every_builder_merges_tool_source_policies_the_same_way(build: FlowBuilder) -> None:
    pinned = ToolPolicy(effect=ToolEffect.READ)
    sources = [
        tool(note, name="a", policy=ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)),
        tool(note, name="b", policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)),
        tool(note, name="c"),
    ]
    flow = build(sources, options=AgentSessionOptions(tool_policies={"b": pinned}))
    assert flow.options.tool_policies == {"a": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE), "b": pinned}


def test_flow_arguments_name_every_argument_of_the_flow_but_its_own() -> None:
    # A builder forwards `FlowArguments`; an argument missing from it could not be passed.
    parameters = set(inspect.signature(AgentSessionFlow.__init__).parameters)
    assert set(FlowArguments.__annotations__) == parameters - {"self", "runner", "flow_type", "tool_specs"}


def test_merge_keeps_explicit_policies_and_the_first_spec_of_a_name() -> None:
    explicit = ToolPolicy(effect=ToolEffect.READ, requires_approval=True)
    first = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)
    specs = [
        tool(note, name="dup", policy=first),
        tool(note, name="dup", policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)),
        tool(note, name="mine", policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)),
        tool(note, name="none"),
    ]
    options = AgentSessionOptions(tool_policies={"mine": explicit})
    merged = merge_tool_policies(options, specs)
    assert merged.tool_policies == {"mine": explicit, "dup": first}
    assert options.tool_policies == {"mine": explicit}
    assert merge_tool_policies(options, [tool(note, name="none")]) is options


def test_flow_merges_its_tool_specs_into_its_options(tmp_path: Path) -> None:
    spec = tool(note, policy=ToolPolicy(effect=ToolEffect.READ))
    flow = AgentSessionFlow(ScriptedRunner(tmp_path), flow_type="merge", tool_specs=[spec])
    assert flow.options.tool_policies == {"note": ToolPolicy(effect=ToolEffect.READ)}
