"""Registers the framework ``claude-agent-sdk``.

Every process that loads sessionflow's plugins imports this module, so it imports only
sessionflow (and `_tool_floors`, standard library only) here; the Claude Agent SDK loads
when a runner is built.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from sessionflow.kit import DemoTool, DemoTour, FrameworkCapabilities, FrameworkSpec, HarnessContext, hookimpl
from sessionflow_claude_agent_sdk._tool_floors import LOCAL_TOOL_TWINS

if TYPE_CHECKING:
    from sessionflow.kit import AgentFrameworkRunner

__all__ = ["CAPABILITIES", "DEMO_TOUR", "REPLACED_LOCAL_TOOL_GROUPS", "sessionflow_register_frameworks"]

CAPABILITIES = FrameworkCapabilities(
    # Every call of a response is deferred, and each runs as its own step.
    parallel_tool_calls=True,
    # Thinking deltas from the CLI's partial messages (include_partial_messages).
    reasoning_deltas=True,
    # A user message's images go to the CLI as image blocks, as the SDK sends them.
    images=True,
    # ToolSpec.mcp_annotations, and the annotations of custom SDK MCP tools, map to effects.
    mcp_annotations=True,
    # allowed_tools, hooks and can_use_tool, and a spec's needs_approval/pre_approved.
    framework_approvals=True,
    # A spec's question (sessionflow.kit._tool_asks): the call waits as a question.
    questions=True,
    # A spec's verify, for a write whose step died.
    verified_outcomes=True,
)

REPLACED_LOCAL_TOOL_GROUPS: frozenset[str] = frozenset({"files", "shell", "web_fetch"})
"""Local tool groups of the sessionflow CLI that Claude Code's own tools replace.

The CLI harness runs Claude Code's `Read`, `Grep`, `Glob`, `Write`, `Edit` (files),
`Bash` (shell) and `WebFetch` (web_fetch) as durable tool steps, so a harness for this
framework need not offer sessionflow's local tools of these groups as well.
"""

DEMO_TOUR = DemoTour(
    # Claude Code's own tools take absolute paths; Glob lists the workspace without Bash,
    # which would wait for approval before the tour's write does.
    list=DemoTool(name="Glob", path_argument="path", fixed_arguments={"pattern": "*"}, absolute_paths=True),
    read=DemoTool(name="Read", path_argument="file_path", absolute_paths=True),
    write=DemoTool(name="Write", path_argument="file_path", content_argument="content", absolute_paths=True),
)
"""The CLI's offline demo on this framework: Claude Code's Glob, Read and Write."""


def _build_runner(ctx: HarnessContext) -> AgentFrameworkRunner:
    """Claude Code in the workspace: its own tools (none when ``ctx.framework_tools`` is
    False), plus the context's tool specs.

    Settings: ``tools`` (Claude Code tools to offer; default all it can run), ``env``
    (extra environment of the CLI), ``cli_path``, ``config_root`` and ``base_url``.
    ``Bash`` runs in the context's ``shell_sandbox`` (the CLI's ``local_tools.shell.sandbox``).
    """
    from claude_agent_sdk import ClaudeAgentOptions

    from sessionflow_claude_agent_sdk._runner import ClaudeAgentRunner

    if ctx.api not in (None, "anthropic_messages"):
        raise ValueError(f"the Claude Code CLI speaks anthropic_messages, not {ctx.api!r}")
    env = {key: str(value) for key, value in (ctx.mapping_setting("env") or {}).items()}
    base_url = ctx.model_base_url or ctx.setting("base_url", str)
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    if ctx.api_key:
        env["ANTHROPIC_API_KEY"] = ctx.api_key
    options = ClaudeAgentOptions(
        model=ctx.model,
        system_prompt=ctx.system_prompt,
        cwd=str(ctx.workspace),
        env=env,
        tools=_own_tools(ctx),
        cli_path=ctx.setting("cli_path", str),
    )
    from sessionflow_local_tools import ShellSandbox

    sandbox = ctx.shell_sandbox if isinstance(ctx.shell_sandbox, ShellSandbox) else None
    return ClaudeAgentRunner(
        options, tool_sources=ctx.tools, config_root=ctx.setting("config_root", str), bash_sandbox=sandbox
    )


def _own_tools(ctx: HarnessContext) -> list[str] | None:
    """The Claude Code tools to offer: None offers every one it can run, [] none."""
    if not ctx.framework_tools:
        return []
    listed = ctx.settings.get("tools")
    return [str(t) for t in cast(list[object], listed)] if isinstance(listed, list) else None


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="claude-agent-sdk",
            description="Claude Agent SDK (the Claude Code CLI), one model call per step, Claude Code tools durable",
            capabilities=CAPABILITIES,
            build_runner=_build_runner,
            model_api="anthropic_messages",
            resume_texts=(_resume_prompt(),),
            replaced_local_tool_groups=REPLACED_LOCAL_TOOL_GROUPS,
            local_tool_twins=LOCAL_TOOL_TWINS,
            demo_tour=DEMO_TOUR,
        )
    )


def _resume_prompt() -> str:
    """The text the Claude Code CLI adds after the tool result of every resumed request."""
    configured = os.environ.get("CLAUDE_CODE_RESUME_PROMPT", "")
    return configured if configured.strip() else "Continue from where you left off."
