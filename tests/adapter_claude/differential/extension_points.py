"""Options builders for the extension-point matrix (docs/extension-points/claude-agent-sdk.md)
that no SDK example covers: every hook event at once, and a project's settings.

Module-level builders like `sdk_examples.py`'s, each a function of the run's workspace and
tool log. Every callback logs each call (`InvocationLog` kind ``hook``), so both runs show
what fired, in order, with the fields that tell the calls apart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)
from claude_agent_sdk.types import HookContext, HookEvent, HookInput, HookJSONOutput, PermissionMode

from sessionflow.testing import InvocationLog

Builder = Callable[[Path, InvocationLog], ClaudeAgentOptions]

__all__ = [
    "HOOK_EVENTS",
    "OUTPUT_STYLE_FILES",
    "PROJECT_FILES",
    "TEST_AGENT",
    "every_hook_event",
    "filesystem_agent",
    "logged_can_use_tool",
    "output_style",
    "project_settings",
    "redirecting_callback",
    "user_settings",
    "with_permission_mode",
    "without_bash",
]

HOOK_EVENTS: tuple[HookEvent, ...] = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "Notification",
)
"""Every hook event of the pinned SDK's ``HookEvent`` but PermissionRequest (refused)."""

_SHOWN = ("tool_name", "trigger", "notification_type", "agent_type", "stop_hook_active", "error")


def _hook(log: InvocationLog, event: str) -> Any:
    async def hook(input_data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        fields = {k: v for k, v in input_data.items() if k in _SHOWN}
        log.record("hook", event, **fields)
        return {}

    return hook


def logged_can_use_tool(log: InvocationLog) -> Any:
    """A ``can_use_tool`` that allows every call and logs it (``can_use_tool``, the tool)."""

    async def can_use_tool(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        log.record("hook", "can_use_tool", tool_name=tool_name, input=tool_input)
        return PermissionResultAllow()

    return can_use_tool


def redirecting_callback(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """A ``can_use_tool`` that lets ``touch`` commands run with another file name
    (``updated_input``) and denies every other call it is asked about."""

    async def can_use_tool(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        log.record("hook", "can_use_tool", tool_name=tool_name, input=tool_input)
        command = str(tool_input.get("command", ""))
        if tool_name == "Bash" and command.startswith("touch "):
            return PermissionResultAllow(updated_input={**tool_input, "command": command + ".checked"})
        return PermissionResultDeny(message=f"{tool_name} is not allowed here")

    return ClaudeAgentOptions(cwd=str(workspace), tools=["Read", "Write", "Bash"], can_use_tool=can_use_tool)


def every_hook_event(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """A hook on every event (no matcher), a logging ``can_use_tool``, and a foreground
    ``code-reviewer`` sub-agent (``Agent`` and ``Read`` pre-approved, ``Bash`` asks)."""
    reviewer = AgentDefinition(description="Reviews code", prompt="You are a code reviewer.", tools=["Read"])
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read", "Bash", "Agent"],
        allowed_tools=["Agent", "Read"],
        agents={"code-reviewer": reviewer},
        can_use_tool=logged_can_use_tool(log),
        hooks={event: [HookMatcher(matcher=None, hooks=[_hook(log, event)])] for event in HOOK_EVENTS},
        env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"},
    )


PROJECT_FILES = {
    "CLAUDE.md": "Always answer in French.\n",
    ".claude/settings.json": (
        '{"permissions": {"allow": ["Bash(touch made-by-the-project.txt)"], "deny": ["Read(./secret.txt)"]}}\n'
    ),
    ".claude/commands/greet.md": "---\ndescription: Greet someone\n---\nSay hello to $ARGUMENTS politely.\n",
    "secret.txt": "the secret\n",
}
"""A project as `project_settings` reads it: instructions, permission rules, a slash command."""


def project_settings(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``setting_sources=["project"]`` over `PROJECT_FILES`, with a logging ``can_use_tool``."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read", "Bash"],
        setting_sources=["project"],
        can_use_tool=logged_can_use_tool(log),
    )


def output_style(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """The project's settings choose an output style (`OUTPUT_STYLE_FILES`)."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read"],
        setting_sources=["project"],
        system_prompt={"type": "preset", "preset": "claude_code"},
    )


OUTPUT_STYLE_FILES = {
    ".claude/settings.json": '{"outputStyle": "Terse"}\n',
    ".claude/output-styles/terse.md": (
        "---\nname: Terse\ndescription: Short answers\n---\nAnswer in one short sentence.\n"
    ),
}
"""A project with an output style of its own, chosen in its settings."""


def with_permission_mode(mode: PermissionMode) -> Builder:
    """``Write`` and ``Bash`` offered, in permission mode `mode`, with a logging ``can_use_tool``."""

    def build(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
        return ClaudeAgentOptions(
            cwd=str(workspace),
            tools=["Read", "Write", "Bash"],
            permission_mode=mode,
            can_use_tool=logged_can_use_tool(log),
        )

    return build


def without_bash(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``Read`` and ``Bash`` offered, ``Bash`` disallowed."""
    return ClaudeAgentOptions(cwd=str(workspace), tools=["Read", "Bash"], disallowed_tools=["Bash"])


def user_settings(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """Only the user's settings (``setting_sources=["user"]``)."""
    return ClaudeAgentOptions(cwd=str(workspace), tools=["Read"], setting_sources=["user"])


TEST_AGENT = """---
name: test-agent
description: A simple test agent for SDK testing
tools: Read
---

# Test Agent

You are a simple test agent. When asked a question, provide a brief, helpful answer.
"""
"""``.claude/agents/test-agent.md`` of the SDK's repository (filesystem_agents.py loads it)."""


def filesystem_agent(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """filesystem_agents.py's options (``setting_sources=["project"]``) with ``Read`` and
    ``Agent`` offered, ``Agent`` pre-approved and sub-agents in the foreground."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        setting_sources=["project"],
        tools=["Read", "Agent"],
        allowed_tools=["Agent"],
        env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"},
    )


# -- fields of ClaudeAgentOptions no example covers (test_option_fields.py) -------------------

MCP_JSON_FILES = {
    ".mcp.json": '{"mcpServers": {"files": {"command": "mcp-files-not-installed"}}}\n',
    ".claude/settings.json": '{"enableAllProjectMcpServers": true}\n',
}
"""A project whose settings enable the servers of its ``.mcp.json``."""


def strict_mcp_config(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``strict_mcp_config=True`` over `MCP_JSON_FILES`: Claude Code loads only ``mcp_servers``."""
    return ClaudeAgentOptions(
        cwd=str(workspace), tools=["Read"], setting_sources=["project"], strict_mcp_config=True
    )


def request_options(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """The options the CLI turns into request parameters and headers."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read"],
        fallback_model="scripted-fallback",
        betas=["context-1m-2025-08-07"],
        thinking={"type": "enabled", "budget_tokens": 2000},
        effort="high",
        task_budget={"total": 50_000},
        client_app="sessionflow-tests/1.0",
    )


APPENDED = "Sign every answer with -- the scripted team."


def request_options_by_flag(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``max_thinking_tokens`` and a CLI flag through ``extra_args``."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read"],
        max_thinking_tokens=3000,
        extra_args={"append-system-prompt": APPENDED},
    )


def transport_options(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """The SDK client's own options: a ``stderr`` callback (writing each line to
    ``stderr.txt`` next to the workspace), with the CLI's debug output on stderr
    (``extra_args``), a buffer size and a load timeout."""
    lines = workspace.parent / "stderr.txt"

    def stderr(line: str) -> None:
        with lines.open("a") as out:
            out.write(line.rstrip("\n") + "\n")

    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read"],
        stderr=stderr,
        extra_args={"debug-to-stderr": None},
        max_buffer_size=4 * 1024 * 1024,
        load_timeout_ms=30_000,
    )


def client_stream_options(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``include_hook_events`` and ``forward_subagent_text`` (what the SDK client is sent),
    with a logging UserPromptSubmit hook, so that there is a hook event to send."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read"],
        include_hook_events=True,
        forward_subagent_text=True,
        hooks={"UserPromptSubmit": [HookMatcher(matcher=None, hooks=[_hook(log, "UserPromptSubmit")])]},
    )


def added_directory(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``add_dirs`` with the folder ``shared`` next to the workspace."""
    return ClaudeAgentOptions(cwd=str(workspace), tools=["Read"], add_dirs=[str(workspace.parent / "shared")])


ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


def structured_output(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``output_format`` with a JSON schema (Claude Code's StructuredOutput tool)."""
    return ClaudeAgentOptions(
        cwd=str(workspace), tools=["Read"], output_format={"type": "json_schema", "schema": ANSWER_SCHEMA}
    )


HAIKU_SKILL = """---
name: haiku
description: Answer as a haiku
---
Write the answer as a haiku of three lines.
"""

SKILL_FILES = {".claude/skills/haiku/SKILL.md": HAIKU_SKILL}
"""A project with one skill."""


def project_skill(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``setting_sources=["project"]`` over `SKILL_FILES`, the adapter's seven tools (no ``Skill``)."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read", "Grep", "Glob", "WebFetch", "Write", "Edit", "Bash"],
        setting_sources=["project"],
    )


def all_skills(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``skills="all"`` with the ``Skill`` tool offered, over `SKILL_FILES`."""
    return ClaudeAgentOptions(
        cwd=str(workspace), tools=["Read", "Skill"], setting_sources=["project"], skills="all"
    )


SUB_AGENT_CONTEXT = "Mention the magic word BANANA."
SUB_AGENT_BLOCK = "Also check the tests."


def sub_agent_hook_outputs(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """A foreground ``code-reviewer`` whose SubagentStart hook answers `SUB_AGENT_CONTEXT` as
    ``additionalContext`` and whose SubagentStop hook blocks once (`SUB_AGENT_BLOCK`), unless
    a stop hook is already active."""

    async def start(input_data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        log.record("hook", "SubagentStart", agent_type=input_data.get("agent_type"))
        return {
            "hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": SUB_AGENT_CONTEXT}
        }

    async def stop(input_data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        active = input_data.get("stop_hook_active")
        log.record("hook", "SubagentStop", stop_hook_active=active)
        return {} if active else {"decision": "block", "reason": SUB_AGENT_BLOCK}

    reviewer = AgentDefinition(description="Reviews code", prompt="You are a code reviewer.", tools=["Read"])
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=["Read", "Agent"],
        allowed_tools=["Agent", "Read"],
        agents={"code-reviewer": reviewer},
        hooks={"SubagentStart": [HookMatcher(hooks=[start])], "SubagentStop": [HookMatcher(hooks=[stop])]},
        env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"},
    )
