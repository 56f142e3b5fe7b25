"""Sub-agents (``agents=`` and Claude Code's ``Agent`` tool) as steps of the session.

Claude Code runs a sub-agent inside the ``Agent`` call, in the same CLI run, so one tool
step would hold every model call and tool call of the sub-agent (and a crash would repeat
them all); a deferral inside a sub-agent does not stop the run either. Here the parent's
``Agent`` call is deferred like any other; its tool step only checks that the agent type
exists. The model steps after it drive the sub-agent, one model call per step, as a
conversation of its own (its own Claude session, transcript in the run state): its tool
calls become calls of the turn named ``<Agent call ID>.<call ID>``, grouped under the
parent call, each its own step; its answer is kept in the run state. When every
``Agent`` call of the parent's response has its answer, the parent resumes and the model
sees each answer as that call's result.

The sub-agent's conversation is the agent definition's: its ``prompt`` as the system
prompt, its ``tools`` (the parent's, without ``Agent``, when unset), its ``model``
(``inherit`` or unset: the parent's); the first user message is the call's ``prompt``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions

from sessionflow import AgentToolCall, AgentToolCallStatus
from sessionflow.kit import ToolExecutionError
from sessionflow_claude_agent_sdk._builtin_tools import BUILTIN_TOOL_NAMES
from sessionflow_claude_agent_sdk._permissions import run_hooks
from sessionflow_claude_agent_sdk._settings import filesystem_agents
from sessionflow_claude_agent_sdk._tools import AGENT_TOOL
from sessionflow_claude_agent_sdk._transcript import PendingCall, RunState, SubRun

__all__ = [
    "AGENT_TOOL",
    "SEPARATOR",
    "agent_options",
    "check_agent_call",
    "next_sub_agent",
    "start_context",
    "start_context_prefix",
    "start_sub_runs",
    "sub_agent_hooks",
]

_PARENT_ONLY_HOOKS = frozenset({"UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop"})

SEPARATOR = "."
"""Between the parent's ``Agent`` call ID and its sub-agent's call IDs."""

_SUB_NAMESPACE = uuid.UUID("2b0c4f8e-8d7e-4b6a-9c39-5f3e0d8a7c11")


def agents_of(options: ClaudeAgentOptions) -> Mapping[str, AgentDefinition]:
    """The sub-agents the session can run: the project's files (``setting_sources``), then
    ``agents=``, which win over a file of the same name."""
    return {**filesystem_agents(options), **cast(Mapping[str, AgentDefinition], options.agents or {})}


def check_agent_call(options: ClaudeAgentOptions, arguments: Mapping[str, Any]) -> str:
    """The tool step of an ``Agent`` call: the agent type must exist; nothing runs here.

    Raises:
        ToolExecutionError: An unknown agent type or no prompt (the model sees why).
    """
    kind = arguments.get("subagent_type")
    known = agents_of(options)
    if not isinstance(kind, str) or kind not in known:
        names = ", ".join(sorted(known)) or "none"
        raise ToolExecutionError(f"Agent type '{kind}' not found. Available agents: {names}")
    if not isinstance(arguments.get("prompt"), str):
        raise ToolExecutionError("the Agent call has no prompt")
    return f"sub-agent {kind} started"


def start_sub_runs(
    calls: Sequence[PendingCall], options: ClaudeAgentOptions, session_id: str
) -> list[SubRun]:
    """A sub-run for every ``Agent`` call of the response (started once its call's step succeeds)."""
    runs: list[SubRun] = []
    for call in calls:
        if call.name != AGENT_TOOL or call.denial is not None:
            continue
        runs.append(
            SubRun(
                call_id=call.id,
                agent_type=str(call.input.get("subagent_type") or ""),
                prompt=str(call.input.get("prompt") or ""),
                session_id=str(uuid.uuid5(_SUB_NAMESPACE, f"{session_id}/{call.id}")),
            )
        )
    return runs


def next_sub_agent(state: RunState, record_of: Callable[[str], AgentToolCall]) -> SubRun | None:
    """The first sub-agent that still owes its answer; its ``Agent`` call's step must have succeeded."""
    for sub in state.sub_runs:
        if sub.answer is None and record_of(sub.call_id).status is AgentToolCallStatus.SUCCEEDED:
            return sub
    return None


def agent_options(options: ClaudeAgentOptions, agent_type: str) -> ClaudeAgentOptions:
    """The options of a sub-agent's conversation, from its definition and the parent's options."""
    agent = agents_of(options).get(agent_type)
    if agent is None:
        raise ToolExecutionError(f"Agent type '{agent_type}' not found")
    parent_tools = options.tools if isinstance(options.tools, list) else list(BUILTIN_TOOL_NAMES)
    wanted = agent.tools if agent.tools is not None else [t for t in parent_tools if t != AGENT_TOOL]
    if agent.disallowedTools:
        wanted = [t for t in wanted if t not in agent.disallowedTools]
    servers = cast(dict[str, Any], options.mcp_servers) if isinstance(options.mcp_servers, dict) else {}
    # An agent that names no MCP tool gets none; naming one keeps its server.
    kept = {
        name: config
        for name, config in servers.items()
        if agent.tools is None or any(t == f"mcp__{name}" or t.startswith(f"mcp__{name}__") for t in wanted)
    }
    model = options.model if agent.model in (None, "inherit") else agent.model
    # The parent's lifecycle hooks are not the sub-agent's: Claude Code fires SubagentStart
    # and SubagentStop around a sub-agent (the model steps run them, `sub_agent_hooks`), and
    # no UserPromptSubmit or Stop for it.
    hooks = {e: m for e, m in (options.hooks or {}).items() if e not in _PARENT_ONLY_HOOKS}
    return replace(
        options,
        hooks=cast(Any, hooks) or None,
        system_prompt=agent.prompt,
        tools=[t for t in wanted if t in BUILTIN_TOOL_NAMES],
        mcp_servers=kept,
        model=model,
        agents=None,
        max_turns=agent.maxTurns,
        permission_mode=agent.permissionMode or options.permission_mode,
    )


async def sub_agent_hooks(
    options: ClaudeAgentOptions, event_name: str, sub: SubRun, hook_input: dict[str, Any]
) -> list[dict[str, Any]]:
    """Run the user's SubagentStart or SubagentStop hooks for `sub`, as Claude Code runs them
    around a sub-agent (the matcher fits the agent type); their outputs."""
    event: dict[str, Any] = {
        **hook_input,
        "hook_event_name": event_name,
        "agent_id": sub.session_id,
        "agent_type": sub.agent_type,
    }
    if event_name == "SubagentStop":
        event.update(stop_hook_active=False, agent_transcript_path="")
    return await run_hooks(options, event, sub.agent_type, None)


def start_context(outputs: list[dict[str, Any]]) -> str | None:
    """The ``additionalContext`` the SubagentStart hooks answered, or None."""
    found: list[str] = []
    for output in outputs:
        specific = output.get("hookSpecificOutput")
        if isinstance(specific, dict):
            context = cast(dict[str, Any], specific).get("additionalContext")
            if context:
                found.append(str(context))
    return "\n".join(found) if found else None


def start_context_prefix(sub: SubRun) -> str | None:
    """What heads the environment block of the sub-agent's requests: its SubagentStart
    hooks' context, in Claude Code's words."""
    return None if sub.context is None else f"SubagentStart hook additional context: {sub.context}\n\n"
