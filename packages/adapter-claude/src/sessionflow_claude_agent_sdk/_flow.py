"""`claude_agent_session_flow`: Claude Agent SDK options as a durable session flow."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from sessionflow.deltas import DeltaTransport
from sessionflow.plugins import ToolSpec
from sessionflow.session import AgentSessionOptions
from sessionflow.temporal import AgentSessionFlow
from sessionflow_claude_agent_sdk._runner import ClaudeAgentRunner, OptionsSource

__all__ = ["claude_agent_session_flow"]


def claude_agent_session_flow(
    options_factory: OptionsSource,
    *,
    flow_type: str,
    options: AgentSessionOptions | None = None,
    tool_sources: Sequence[ToolSpec] = (),
    config_root: str | Path | None = None,
    continue_as_new_after_events: int = 10_000,
    delta_transport: DeltaTransport | None = None,
    delta_fallback: bool = True,
) -> AgentSessionFlow:
    """A flow type whose sessions run the Claude Code CLI configured by `options_factory`.

    `options_factory` is a `ClaudeAgentOptions`, or a function of a `ClaudeStepInfo`
    returning one (called for every model step and every tool call, on any worker).
    Claude Code's own tools (`Read`, `Grep`, `Glob`, `WebFetch`: reads; `Write`: an
    idempotent write; `Edit`, `Bash`: non-idempotent writes), the custom tools of its
    in-process SDK MCP servers, and every spec in `tool_sources` become durable tool
    steps. A spec's `policy` goes into `options.tool_policies` unless the options already
    name that tool. See `ClaudeAgentRunner` for `config_root`; the other arguments are
    `AgentSessionFlow`'s.
    """
    runner = ClaudeAgentRunner(options_factory, tool_sources=tool_sources, config_root=config_root)
    session_options = options or AgentSessionOptions()
    added = {
        s.name: s.policy
        for s in tool_sources
        if s.policy is not None and s.name not in session_options.tool_policies
    }
    if added:
        session_options = replace(session_options, tool_policies={**session_options.tool_policies, **added})
    return AgentSessionFlow(
        runner,
        flow_type=flow_type,
        options=session_options,
        continue_as_new_after_events=continue_as_new_after_events,
        delta_transport=delta_transport,
        delta_fallback=delta_fallback,
    )
