"""The tools a Strands agent offers, and how one call of one tool runs in a tool step.

The agent's own tools (``@tool`` functions, sync and async, class-based `AgentTool`s) run
through Strands' own `AgentTool.stream`, as its tool executor runs them: input validation,
``ToolContext`` and the error result of a tool that raises are Strands'. A neutral
`ToolSpec` (a harness's, or ``tool_sources``) is offered to the model in Strands' spec
format and runs through its handler.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from strands.agent import Agent
from strands.interrupt import Interrupt
from strands.tools.mcp.mcp_agent_tool import MCPAgentTool
from strands.types._events import ToolInterruptEvent, ToolResultEvent
from strands.types.tools import AgentTool, ToolResult, ToolUse

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import (
    AgentTurnContext,
    DeferredToolCall,
    ToolInvocation,
    ToolSpec,
    declared_effect,
    declared_policy,
    effect_from_mcp_annotations,
    tool_arguments_object,
    with_tool_asks,
)

__all__ = ["deferred_call", "mcp_effect", "run_agent_tool", "run_spec", "spec_tool_specs", "verifiable"]


def spec_tool_specs(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Neutral specs in Strands' tool spec format (what `AgentTool.tool_spec` returns)."""
    return [
        {"name": s.name, "description": s.description, "inputSchema": {"json": dict(s.parameters)}}
        for s in specs
    ]


def deferred_call(
    tool_use: Mapping[str, Any],
    turn: AgentTurnContext,
    tools: Mapping[str, AgentTool],
    specs: Mapping[str, ToolSpec],
) -> DeferredToolCall:
    """One ``toolUse`` block as a deferred call, with the policy the order of every adapter gives
    it: the session's explicit policy, the tool's mark (`sessionflow.effect`), a spec's effect."""
    import json

    name = str(tool_use["name"])
    effect: ToolEffect | None = None
    policy: ToolPolicy | None = None
    tool = tools.get(name)
    spec = specs.get(name)
    if tool is not None:
        effect, policy = declared_effect(tool), declared_policy(tool)
        if effect is None:
            effect = mcp_effect(tool)
    elif spec is not None:
        effect, policy = spec.framework_effect, spec.policy
    call = DeferredToolCall(
        tool_call_id=str(tool_use["toolUseId"]),
        tool_name=name,
        arguments=json.dumps(tool_use.get("input") or {}, ensure_ascii=False),
        policy=turn.resolve_tool_policy(name, effect, declared_policy=policy),
    )
    return with_tool_asks(call, spec) if spec is not None else call


def mcp_effect(tool: AgentTool) -> ToolEffect | None:
    """An `MCPClient` tool's effect from its server's annotations (``readOnlyHint``,
    ``idempotentHint``), by the one mapping every adapter uses; None without a promise."""
    if not isinstance(tool, MCPAgentTool):
        return None
    annotations = tool.mcp_tool.annotations
    if annotations is None:
        return None
    return effect_from_mcp_annotations(annotations.model_dump(by_alias=True, exclude_none=True))


async def verifiable(call: DeferredToolCall, spec: ToolSpec | None) -> DeferredToolCall:
    """A call of a spec with a verify is deferred verifiable, with its basis recorded now
    (as the builtin runner does): a write whose step died is then settled by the verify."""
    if spec is None or spec.verify is None:
        return call
    arguments = tool_arguments_object(call.arguments)
    basis = await spec.deferral_basis(arguments) if arguments is not None else None
    return replace(call, verifiable=True, verify_basis=basis)


async def run_agent_tool(
    tool_use: ToolUse, agent: Agent, structured_output_context: Any = None
) -> ToolResult | list[Interrupt]:
    """Run one call as Strands' tool executor does (`ToolExecutor._stream`): the agent's
    ``BeforeToolCallEvent`` hooks first (which may cancel the call, or replace the tool or its
    input, before anything runs), then the tool, then ``AfterToolCallEvent`` (which may
    rewrite the result, or run the tool again). ``agent`` is what ``ToolContext.agent`` and
    the hooks' ``event.agent`` get; the last result event is the call's result, or the
    interrupts a hook or the tool raised (the run stopped there, as Strands' stops)."""
    from strands.tools.executors._executor import ToolExecutor

    # The executor's per-call stream: hooks, tool lookup, cancel and retry, as a plain run.
    stream = cast(Any, ToolExecutor._stream)  # pyright: ignore[reportPrivateUsage]
    results: list[ToolResult] = []
    result: ToolResult | None = None
    async for event in stream(agent, tool_use, results, {}, structured_output_context):
        if isinstance(event, ToolInterruptEvent):
            return list(event.interrupts)
        if isinstance(event, ToolResultEvent):
            result = event.tool_result
    if result is None:
        # Strands' executor fails the same way: a tool stream must end with its result.
        raise RuntimeError(f"Strands tool {tool_use['name']!r} ended without a result")
    return result


async def run_spec(
    spec: ToolSpec, tool_use: ToolUse, invocation: ToolInvocation
) -> tuple[ToolResult, Mapping[str, Any]]:
    """Run a neutral spec's handler: the result Strands' model sees (its text), and its
    `ToolOutput.state_update`, keys of `agent.state`."""
    output = await spec.call_output(cast(dict[str, Any], tool_use.get("input") or {}), invocation)
    result: ToolResult = {
        "toolUseId": tool_use["toolUseId"],
        "status": "success",
        "content": [{"text": output.text}],
    }
    return result, output.state_update or {}
