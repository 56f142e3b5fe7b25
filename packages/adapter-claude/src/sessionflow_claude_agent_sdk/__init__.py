"""Claude Agent SDK adapter for sessionflow: Claude Code as a durable session on Temporal.

    flow = claude_agent_session_flow(ClaudeAgentOptions(cwd="/srv/repo"), flow_type="Coder")

Every model request is one durable step (one run of the Claude Code CLI) and every tool
call its own step; see the package README for tools, effects and what is stored.

Names load on first use, so discovering the plugin does not import the Claude Agent SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionflow.kit import lazy_exports

if TYPE_CHECKING:
    from sessionflow_claude_agent_sdk._builtin_tools import (
        BUILTIN_TOOL_EFFECTS,
        BUILTIN_TOOL_POLICIES,
        run_builtin_tool,
    )
    from sessionflow_claude_agent_sdk._errors import ClaudeStepError
    from sessionflow_claude_agent_sdk._flow import claude_agent_session_flow
    from sessionflow_claude_agent_sdk._plugin import CAPABILITIES, DEMO_TOUR, REPLACED_LOCAL_TOOL_GROUPS
    from sessionflow_claude_agent_sdk._runner import (
        CONFIG_ROOT_ENV,
        ClaudeAgentRunner,
        ClaudeStepInfo,
        OptionsFactory,
        OptionsSource,
    )
    from sessionflow_claude_agent_sdk._tool_floors import LOCAL_TOOL_TWINS
    from sessionflow_claude_agent_sdk._transcript import RUN_STATE_VERSION

__getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "BUILTIN_TOOL_EFFECTS",
    "BUILTIN_TOOL_POLICIES",
    "CAPABILITIES",
    "CONFIG_ROOT_ENV",
    "DEMO_TOUR",
    "LOCAL_TOOL_TWINS",
    "REPLACED_LOCAL_TOOL_GROUPS",
    "RUN_STATE_VERSION",
    "ClaudeAgentRunner",
    "ClaudeStepError",
    "ClaudeStepInfo",
    "OptionsFactory",
    "OptionsSource",
    "claude_agent_session_flow",
    "run_builtin_tool",
]
