"""A function tool's own ``needs_approval`` as the framework's approval of a deferred call.

The gated clone asks for every call (so the session can run each in its own step); the
real tool's setting decides whether the SDK would have stopped this call for a person.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any, cast

from agents import FunctionTool, HostedMCPTool, RunContextWrapper, RunState

from sessionflow import AgentToolCall, AgentToolCallStatus, SessionStateError
from sessionflow.kit import DeferredToolCall, FrameworkApproval, describe_tool_call_outcome
from sessionflow_openai_agents._graph import AgentGraph

__all__ = ["answer_interruptions", "framework_approval", "plain_stops"]


async def framework_approval(
    tool: FunctionTool, context: RunContextWrapper[Any], arguments: str, call_id: str
) -> FrameworkApproval | None:
    """``"required"`` when the tool's ``needs_approval`` asks for this call, else None.

    The callable gets the run context, the parsed arguments and the call ID, as the SDK
    calls it. Arguments that are not a JSON object cannot be shown to it, and the SDK then
    asks for approval; so does this.
    """
    setting = tool.needs_approval
    if isinstance(setting, bool):
        return "required" if setting else None
    parsed = _parsed(arguments)
    if parsed is None:
        return "required"
    answer: Any = setting(context, parsed, call_id)
    if inspect.isawaitable(answer):
        answer = await answer
    return "required" if answer else None


def plain_stops(calls: list[DeferredToolCall], graph: AgentGraph) -> bool:
    """Whether the plain run stops at these calls and is resumed later, which fires the run's
    start hooks again (`_hooks`): a call its tool's own rule holds for a person, unless it is a
    hosted MCP server's whose ``on_approval_request`` answers it inside the run."""
    for call in calls:
        if call.framework_approval != "required":
            continue
        label, dot, _ = call.tool_name.partition(".")
        hosted = [
            tool
            for agent in graph.agents.values()
            for tool in agent.tools
            if dot and isinstance(tool, HostedMCPTool) and tool.tool_config.get("server_label") == label
        ]
        if not hosted or hosted[0].on_approval_request is None:
            return True
    return False


def _parsed(arguments: str) -> dict[str, Any] | None:
    try:
        value: Any = json.loads(arguments) if arguments.strip() else None
    except ValueError:
        return None
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def answer_interruptions(
    state: RunState[Any, Any],
    wrapper: RunContextWrapper[Any],
    records: Mapping[str, AgentToolCall],
    prefix: str = "",
) -> None:
    """Approve each pending call whose stub returns the recorded result; reject the rejected.

    ``wrapper`` is the run context ``state`` was restored in (`SavedRunState.restore`).
    The decisions go to it, as `RunState.approve` ends up doing: that method first matches
    each item against every pending one by its invocation identity (a deep copy and
    fingerprint per pair, about 14 ms a call), to find the owner among nested agent-tool
    runs. A restored state here has none (a sub-agent's run is a state of its own,
    `_agent_tools`), and its pending items are its own, so the match can only find the
    item itself.

    ``prefix`` is an agent tool's call ID and separator: a sub-run's calls are recorded under it."""
    for item in state.get_interruptions():
        call_id = prefix + (item.call_id or "")
        record = records.get(call_id)
        if record is None or not record.is_final:
            raise SessionStateError(f"tool call {call_id!r} has no final record")
        if record.status is AgentToolCallStatus.REJECTED and record.approval_source == "framework":
            # Only the tool's own needs_approval asked: the model reads the SDK's rejection text.
            wrapper.reject_tool(item)
        elif record.status is AgentToolCallStatus.REJECTED:
            # The SDK sends exactly this text to the model as the tool's output.
            wrapper.reject_tool(item, rejection_message=describe_tool_call_outcome(record))
        else:
            wrapper.approve_tool(item)
