"""`claude_agent_session_flow`: Claude Agent SDK options as a durable session flow."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from sessionflow import AgentSessionFlow
from sessionflow.kit import FlowArguments, ToolSpec
from sessionflow_claude_agent_sdk._runner import ClaudeAgentRunner, OptionsSource
from sessionflow_local_tools import ShellSandbox

__all__ = ["claude_agent_session_flow"]


def claude_agent_session_flow(
    options_factory: OptionsSource,
    *,
    flow_type: str,
    tool_sources: Sequence[ToolSpec] = (),
    config_root: str | Path | None = None,
    bash_sandbox: ShellSandbox | None = None,
    **flow_args: Unpack[FlowArguments],
) -> AgentSessionFlow:
    """A flow type whose sessions run the Claude Code CLI configured by `options_factory`.

    `options_factory` is a `ClaudeAgentOptions`, or a function of a `ClaudeStepInfo`
    returning one (called for every model step and every tool call, on any worker).
    Claude Code's own tools (`Read`, `Grep`, `Glob`, `WebFetch`: reads; `Write`: an
    idempotent write; `Edit`, `Bash`: non-idempotent writes), the custom tools of its
    in-process SDK MCP servers, and every spec in `tool_sources` become durable tool
    steps. A spec's `policy` goes into `options.tool_policies` unless the options already
    name that tool. See `ClaudeAgentRunner` for `config_root` and `bash_sandbox` (each
    `Bash` command confined like the local tools' shell); `flow_args` (`options`,
    `delta_transport`, ...) are `AgentSessionFlow`'s.
    """
    runner = ClaudeAgentRunner(
        options_factory, tool_sources=tool_sources, config_root=config_root, bash_sandbox=bash_sandbox
    )
    return AgentSessionFlow(runner, flow_type=flow_type, tool_specs=tool_sources, **flow_args)
