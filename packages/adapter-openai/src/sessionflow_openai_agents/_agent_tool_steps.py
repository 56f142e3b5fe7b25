"""The session outcomes of agent tool steps (see `_agent_tools`): what the runner returns."""

from __future__ import annotations

from sessionflow.kit import AgentTurnOutcome, ContinueRequested, ToolCallsRequested
from sessionflow_openai_agents._agent_tools import (
    AgentToolTree,
    Entries,
    EntriesStep,
    join_agent_tools,
    new_entries,
)

__all__ = ["agent_tool_outcome", "with_agent_tools"]


def with_agent_tools(outcome: AgentTurnOutcome, tree: AgentToolTree) -> AgentTurnOutcome:
    """The parent's outcome, its run state with an entry for every agent tool it deferred."""
    if not isinstance(outcome, ToolCallsRequested):
        return outcome
    entries = new_entries(outcome.tool_calls, tree)
    if not entries:
        return outcome
    return ToolCallsRequested(
        framework_run_state=join_agent_tools(outcome.framework_run_state, entries),
        tool_calls=outcome.tool_calls,
        usage=outcome.usage,
    )


def agent_tool_outcome(run_state: str, entries: Entries, step: EntriesStep) -> AgentTurnOutcome:
    """A step in which a sub-agent made its model call: its tool calls, or go on."""
    state = join_agent_tools(run_state, entries)
    if step.calls:
        return ToolCallsRequested(framework_run_state=state, tool_calls=step.calls, usage=step.usage)
    return ContinueRequested(framework_run_state=state, note="agent tool", usage=step.usage)
