"""Custom SDK MCP tools with Claude Code's permission options and tool hooks (not from an example).

Module-level builders like `sdk_examples.py`'s (a worker child of a crash run rebuilds
them by name), each a function of the run's workspace and tool log. The server is
``notes`` and its tool ``lookup`` (``mcp__notes__lookup`` to the model), which declares
no MCP annotations: the session's default effect decides how it is retried.

- `lookup_pre_hook_rewrite`: a PreToolUse hook allows the call and rewrites its input
  (``updatedInput``): the tool must run with the rewritten topic.
- `lookup_post_hook_rewrite`: pre-approved; a PostToolUse hook replaces the text the model
  sees (``updatedMCPToolOutput``).
- `lookup_allowed`: pre-approved by ``allowed_tools`` and nothing else.
- `lookup_max_turns`: pre-approved, ``max_turns=1``.
- `lookup_budget_one`, `lookup_budget_small`: pre-approved, ``max_budget_usd`` of $1 and
  $0.30 (a scripted reply of `BIG_USAGE` costs $0.42 as the CLI prices it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    HookMatcher,
    SdkMcpTool,
    create_sdk_mcp_server,
    tool,
)
from claude_agent_sdk.types import HookContext, HookInput, HookJSONOutput

from sessionflow.demo import ScriptedUsage
from sessionflow.testing import InvocationLog
from tests.adapter_claude.differential.sdk_examples import CLAUDE_CODE_TOOLS

__all__ = [
    "BIG_USAGE",
    "LOOKUP",
    "lookup_allowed",
    "lookup_budget_one",
    "lookup_budget_small",
    "lookup_in_a_sub_agent",
    "lookup_max_turns",
    "lookup_post_hook_rewrite",
    "lookup_pre_hook_rewrite",
    "lookup_text",
    "notes_tools",
]

LOOKUP = "mcp__notes__lookup"
"""The tool's name as the model calls it."""


def lookup_text(topic: str) -> str:
    return f"Notes on {topic}: three entries."


def notes_tools(log: InvocationLog) -> list[SdkMcpTool[Any]]:
    """``lookup``: no annotations; it logs its run once its work is done."""

    @tool("lookup", "Look up the notes on a topic", {"topic": str})
    async def lookup(args: dict[str, Any]) -> dict[str, Any]:
        text = lookup_text(str(args["topic"]))
        log.record("tool", "lookup", args=args)
        return {"content": [{"type": "text", "text": text}]}

    return [lookup]


def _options(workspace: Path, log: InvocationLog, **kwargs: Any) -> ClaudeAgentOptions:
    server = create_sdk_mcp_server(name="notes", version="1.0.0", tools=notes_tools(log))
    kwargs.setdefault("tools", list(CLAUDE_CODE_TOOLS))
    return ClaudeAgentOptions(cwd=str(workspace), mcp_servers={"notes": server}, **kwargs)


def lookup_allowed(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``allowed_tools`` pre-approves the unannotated ``lookup``: plain asks nobody."""
    return _options(workspace, log, allowed_tools=[LOOKUP])


def lookup_in_a_sub_agent(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """A ``researcher`` sub-agent whose only tool is ``lookup`` (pre-approved)."""
    researcher = AgentDefinition(
        description="Looks things up in the notes",
        prompt="You are a researcher. Use the notes.",
        tools=[LOOKUP],
    )
    return _options(
        workspace,
        log,
        tools=[*CLAUDE_CODE_TOOLS, "Agent"],
        allowed_tools=[LOOKUP, "Agent"],
        agents={"researcher": researcher},
        # Sub-agents in the foreground, as the adapter requires (it refuses background ones).
        env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"},
    )


BIG_USAGE = ScriptedUsage(input_tokens=100_000, output_tokens=1000)
"""A reply's usage that the CLI prices at $0.42 (the model is unknown to it)."""


def lookup_budget_one(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``max_budget_usd=1``: two `BIG_USAGE` replies stay under it, the third reaches it."""
    return _options(workspace, log, allowed_tools=[LOOKUP], max_budget_usd=1.0)


def lookup_budget_small(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``max_budget_usd=0.3``: the first `BIG_USAGE` reply reaches it."""
    return _options(workspace, log, allowed_tools=[LOOKUP], max_budget_usd=0.3)


def lookup_max_turns(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """One model request per turn at most (``max_turns=1``), ``lookup`` pre-approved."""
    return _options(workspace, log, allowed_tools=[LOOKUP], max_turns=1)


def lookup_pre_hook_rewrite(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """A PreToolUse hook on ``lookup`` allows it with the topic rewritten (``updatedInput``).

    Nothing else pre-approves the tool: without the hook's ``allow``, plain would ask.
    """

    async def rewrite_topic(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        tool_input: dict[str, Any] = dict(input_data.get("tool_input", {}))
        topic = str(tool_input.get("topic", ""))
        output: HookJSONOutput = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": "topics are looked up in lower case",
                "updatedInput": {**tool_input, "topic": f"{topic.lower()} (reviewed)"},
            }
        }
        log.record("hook", "rewrite_topic", tool=input_data.get("tool_name"), input=tool_input, output=output)
        return output

    return _options(
        workspace, log, hooks={"PreToolUse": [HookMatcher(matcher=LOOKUP, hooks=[rewrite_topic])]}
    )


def lookup_post_hook_rewrite(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``lookup`` pre-approved; a PostToolUse hook replaces what the model sees of its output."""

    async def redact_output(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        tool_input: dict[str, Any] = dict(input_data.get("tool_input", {}))
        output: HookJSONOutput = {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "updatedMCPToolOutput": f"[redacted notes on {tool_input.get('topic')}]",
            }
        }
        log.record(
            "hook",
            "redact_output",
            tool=input_data.get("tool_name"),
            input=tool_input,
            response=input_data.get("tool_response"),
            output=output,
        )
        return output

    return _options(
        workspace,
        log,
        allowed_tools=[LOOKUP],
        hooks={"PostToolUse": [HookMatcher(matcher=LOOKUP, hooks=[redact_output])]},
    )
