"""The Claude Agent SDK's own examples, as options builders for the differential tests.

Copied from `anthropics/claude-agent-sdk-python` at commit
`e8bde60164f9ef820068ec36ffe6b7be6bd8fd26`, `examples/`: quick_start.py, mcp_calculator.py,
tools_option.py, hooks.py, system_prompt.py, agents.py. Each builder is a module-level
function of the run's workspace and tool log returning the example's `ClaudeAgentOptions`
(a worker child of a crash run rebuilds it by name). The harness adds what points the CLI
at the scripted model server (`harness.scripted`: model, base URL, key, environment).

Changes to the examples:

- `cwd` is the run's workspace (the examples run in the current directory).
- Where an example leaves `tools` unset, it is `CLAUDE_CODE_TOOLS`: the seven Claude Code
  tools the adapter offers for `tools=None` (its README, "Tools"). Plain, `tools=None` offers
  every tool of the CLI (`Agent`, `CronCreate`, `NotebookEdit`, `WebSearch`, ...), which the
  adapter cannot run in a tool step; `test_tools_option.py` runs the preset itself.
- The calculator's tools log each run (`InvocationLog`), after their work; the hooks log
  each call, so both runs show which hooks fired.
- hooks.py's `DecisionFields` example names a real model; the harness replaces it like
  every other.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    SdkMcpTool,
    ToolPermissionContext,
    create_sdk_mcp_server,
    tool,
)
from claude_agent_sdk.types import HookContext, HookInput, HookJSONOutput

from sessionflow.testing import InvocationLog

__all__ = [
    "CALCULATOR_TOOLS",
    "CLAUDE_CODE_TOOLS",
    "agents_code_reviewer",
    "agents_code_reviewer_foreground",
    "file_assistant_asking",
    "hooks_decision_fields",
    "hooks_posttooluse",
    "hooks_pretooluse",
    "hooks_userpromptsubmit",
    "include_partial_messages",
    "mcp_calculator",
    "my_permission_callback",
    "quick_start_basic",
    "quick_start_with_options",
    "quick_start_with_tools",
    "reader",
    "system_prompt_none",
    "system_prompt_preset",
    "system_prompt_preset_with_append",
    "system_prompt_string",
    "tool_permission_callback",
    "tools_array",
    "tools_empty_array",
    "tools_preset",
]

CLAUDE_CODE_TOOLS = ["Read", "Grep", "Glob", "WebFetch", "Write", "Edit", "Bash"]
"""The Claude Code tools the adapter can run (its default for ``tools=None``)."""


# -- quick_start.py ------------------------------------------------------------------------


def quick_start_basic(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`basic_example`: no options at all."""
    return ClaudeAgentOptions(cwd=str(workspace), tools=list(CLAUDE_CODE_TOOLS))


def quick_start_with_options(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`with_options_example`."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        system_prompt="You are a helpful assistant that explains things simply.",
        max_turns=1,
    )


def quick_start_with_tools(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`with_tools_example`: ``Read`` and ``Write`` pre-approved."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        allowed_tools=["Read", "Write"],
        system_prompt="You are a helpful file assistant.",
    )


# -- mcp_calculator.py ---------------------------------------------------------------------


def calculator_tools(log: InvocationLog) -> list[SdkMcpTool[Any]]:
    """The example's six tools, each logging its run once its work is done."""

    def done(name: str, args: dict[str, Any], text: str, *, is_error: bool = False) -> dict[str, Any]:
        log.record("tool", name, args=args)
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if is_error:
            result["is_error"] = True
        return result

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add_numbers(args: dict[str, Any]) -> dict[str, Any]:
        result = args["a"] + args["b"]
        return done("add", args, f"{args['a']} + {args['b']} = {result}")

    @tool("subtract", "Subtract one number from another", {"a": float, "b": float})
    async def subtract_numbers(args: dict[str, Any]) -> dict[str, Any]:
        result = args["a"] - args["b"]
        return done("subtract", args, f"{args['a']} - {args['b']} = {result}")

    @tool("multiply", "Multiply two numbers", {"a": float, "b": float})
    async def multiply_numbers(args: dict[str, Any]) -> dict[str, Any]:
        result = args["a"] * args["b"]
        return done("multiply", args, f"{args['a']} × {args['b']} = {result}")  # noqa: RUF001 - the example's text

    @tool("divide", "Divide one number by another", {"a": float, "b": float})
    async def divide_numbers(args: dict[str, Any]) -> dict[str, Any]:
        if args["b"] == 0:
            return done("divide", args, "Error: Division by zero is not allowed", is_error=True)
        result = args["a"] / args["b"]
        return done("divide", args, f"{args['a']} ÷ {args['b']} = {result}")

    @tool("sqrt", "Calculate square root", {"n": float})
    async def square_root(args: dict[str, Any]) -> dict[str, Any]:
        n = args["n"]
        if n < 0:
            return done(
                "sqrt", args, f"Error: Cannot calculate square root of negative number {n}", is_error=True
            )
        return done("sqrt", args, f"√{n} = {math.sqrt(n)}")

    @tool("power", "Raise a number to a power", {"base": float, "exponent": float})
    async def power(args: dict[str, Any]) -> dict[str, Any]:
        result = args["base"] ** args["exponent"]
        return done("power", args, f"{args['base']}^{args['exponent']} = {result}")

    return [add_numbers, subtract_numbers, multiply_numbers, divide_numbers, square_root, power]


CALCULATOR_TOOLS = ["add", "subtract", "multiply", "divide", "sqrt", "power"]


def mcp_calculator(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`main`: the calculator server as ``calc``, its tools pre-approved."""
    calculator = create_sdk_mcp_server(name="calculator", version="2.0.0", tools=calculator_tools(log))
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        mcp_servers={"calc": calculator},
        allowed_tools=[f"mcp__calc__{name}" for name in CALCULATOR_TOOLS],
    )


# -- tools_option.py -----------------------------------------------------------------------


def tools_array(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`tools_array_example`."""
    return ClaudeAgentOptions(cwd=str(workspace), tools=["Read", "Glob", "Grep"], max_turns=1)


def tools_empty_array(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`tools_empty_array_example`."""
    return ClaudeAgentOptions(cwd=str(workspace), tools=[], max_turns=1)


def tools_preset(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`tools_preset_example`: every default Claude Code tool."""
    return ClaudeAgentOptions(
        cwd=str(workspace), tools={"type": "preset", "preset": "claude_code"}, max_turns=1
    )


# -- hooks.py ------------------------------------------------------------------------------
# The callbacks as the example writes them (logging aside); the builders close over the log.


def _logged(log: InvocationLog, name: str, callback: Any) -> Any:
    async def hook(input_data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        output = await callback(input_data, tool_use_id, context)
        log.record("hook", name, tool=input_data.get("tool_name"), output=output)
        return output

    return hook


async def check_bash_command(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    """Prevent certain bash commands from being executed."""
    tool_name = input_data.get("tool_name")
    tool_input: dict[str, Any] = input_data.get("tool_input", {})
    if tool_name != "Bash":
        return {}
    command = tool_input.get("command", "")
    for pattern in ["foo.sh"]:
        if pattern in command:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": f"Command contains invalid pattern: {pattern}",
                }
            }
    return {}


async def add_custom_instructions(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    """Add custom instructions when a session starts."""
    return {
        "hookSpecificOutput": {
            # The example says "SessionStart" here; this CLI fails the turn
            # (error_during_execution) on a hook answer for another event.
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "My favorite color is hot pink",
        }
    }


async def review_tool_output(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    """Review tool output and provide additional context or warnings."""
    tool_response = input_data.get("tool_response", "")
    if "error" in str(tool_response).lower():
        return {
            "systemMessage": "⚠️ The command produced an error",
            "reason": "Tool execution failed - consider checking the command syntax",
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "The command encountered an error. You may want to try a different approach.",
            },
        }
    return {}


async def strict_approval_hook(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    """Demonstrates using permissionDecision to control tool execution."""
    tool_name = input_data.get("tool_name")
    tool_input: dict[str, Any] = input_data.get("tool_input", {})
    if tool_name == "Write":
        file_path = tool_input.get("file_path", "")
        if "important" in file_path.lower():
            return {
                "reason": "Writes to files containing 'important' in the name are not allowed for safety",
                "systemMessage": "🚫 Write operation blocked by security policy",
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "Security policy blocks writes to important files",
                },
            }
    return {
        "reason": "Tool use approved after security review",
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "Tool passed security checks",
        },
    }


def hooks_pretooluse(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`example_pretooluse`: a PreToolUse hook blocks ``foo.sh``."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        allowed_tools=["Bash"],
        hooks={
            "PreToolUse": [
                HookMatcher(matcher="Bash", hooks=[_logged(log, "check_bash_command", check_bash_command)])
            ]
        },
    )


def hooks_userpromptsubmit(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`example_userpromptsubmit`: a UserPromptSubmit hook adds context."""
    hook = _logged(log, "add_custom_instructions", add_custom_instructions)
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        hooks={"UserPromptSubmit": [HookMatcher(matcher=None, hooks=[hook])]},
    )


def hooks_posttooluse(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`example_posttooluse`: a PostToolUse hook reviews Bash's output."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        allowed_tools=["Bash"],
        hooks={
            "PostToolUse": [
                HookMatcher(matcher="Bash", hooks=[_logged(log, "review_tool_output", review_tool_output)])
            ]
        },
    )


def hooks_decision_fields(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`example_decision_fields`: ``permissionDecision`` allow/deny for ``Write``."""
    hook = _logged(log, "strict_approval_hook", strict_approval_hook)
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        allowed_tools=["Write", "Bash"],
        model="claude-sonnet-4-5-20250929",
        hooks={"PreToolUse": [HookMatcher(matcher="Write", hooks=[hook])]},
    )


# -- system_prompt.py ----------------------------------------------------------------------


def system_prompt_none(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`no_system_prompt`."""
    return ClaudeAgentOptions(cwd=str(workspace), tools=list(CLAUDE_CODE_TOOLS))


def system_prompt_string(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`string_system_prompt`."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        system_prompt="You are a pirate assistant. Respond in pirate speak.",
    )


def system_prompt_preset(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`preset_system_prompt`: Claude Code's own prompt."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        system_prompt={"type": "preset", "preset": "claude_code"},
    )


def system_prompt_preset_with_append(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`preset_with_append`."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        system_prompt={
            "type": "preset",
            "preset": "claude_code",
            "append": "Always end your response with a fun fact.",
        },
    )


# -- agents.py -----------------------------------------------------------------------------


def agents_code_reviewer(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`code_reviewer_example`. The example leaves `tools` unset, which offers the CLI's
    ``Agent`` tool; here the seven the adapter runs plus ``Agent``, the tool that starts a
    sub-agent."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=[*CLAUDE_CODE_TOOLS, "Agent"],
        agents={
            "code-reviewer": AgentDefinition(
                description="Reviews code for best practices and potential issues",
                prompt="You are a code reviewer. Analyze code for bugs, performance issues, "
                "security vulnerabilities, and adherence to best practices. "
                "Provide constructive feedback.",
                tools=["Read", "Grep"],
                model="sonnet",
            ),
        },
    )


def agents_code_reviewer_foreground(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """`agents_code_reviewer` as the adapter's refusal of it says to change it: with
    ``CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1`` in the options' ``env``, so that Claude Code runs
    the sub-agent in the foreground. Both runs get the same options; plain then behaves as the
    session does."""
    options = agents_code_reviewer(workspace, log)
    return replace(options, env={**options.env, "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"})


# -- tool_permission_callback.py ------------------------------------------------------------


async def my_permission_callback(
    tool_name: str, input_data: dict[str, Any], context: ToolPermissionContext
) -> PermissionResultAllow | PermissionResultDeny:
    """Control tool permissions based on tool type and input (the example's, without its prints
    and its console prompt for unknown tools, which the scripted model never calls)."""
    if tool_name in ["Read", "Glob", "Grep"]:
        return PermissionResultAllow()
    if tool_name in ["Write", "Edit", "MultiEdit"]:
        file_path = input_data.get("file_path", "")
        if file_path.startswith("/etc/") or file_path.startswith("/usr/"):
            return PermissionResultDeny(message=f"Cannot write to system directory: {file_path}")
        if not file_path.startswith("/tmp/") and not file_path.startswith("./"):
            safe_path = f"./safe_output/{file_path.split('/')[-1]}"
            modified_input = input_data.copy()
            modified_input["file_path"] = safe_path
            return PermissionResultAllow(updated_input=modified_input)
    if tool_name == "Bash":
        command = input_data.get("command", "")
        dangerous_commands = ["rm -rf", "sudo", "chmod 777", "dd if=", "mkfs"]
        for dangerous in dangerous_commands:
            if dangerous in command:
                return PermissionResultDeny(message=f"Dangerous command pattern detected: {dangerous}")
        return PermissionResultAllow()
    return PermissionResultDeny(message="User denied permission")


def tool_permission_callback(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """The example's options: its callback (each call logged as ``can_use_tool``) in the
    default permission mode."""

    async def logged(
        tool_name: str, input_data: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        answer = await my_permission_callback(tool_name, input_data, context)
        log.record("hook", "can_use_tool", tool_name=tool_name, input=input_data, answer=repr(answer))
        return answer

    return ClaudeAgentOptions(
        can_use_tool=logged, permission_mode="default", cwd=str(workspace), tools=list(CLAUDE_CODE_TOOLS)
    )


# -- include_partial_messages.py --------------------------------------------------------------


def include_partial_messages(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """The example's options: partial messages, ``max_turns=2``, a thinking budget in ``env``."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        include_partial_messages=True,
        model="claude-sonnet-4-5",
        max_turns=2,
        env={"MAX_THINKING_TOKENS": "8000"},
    )


# -- not from an example: Claude Code's tools with the SDK's permission callback ----------


def reader(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """``Read`` pre-approved, nothing else said: the shape of quick_start's ``with_tools``."""
    return ClaudeAgentOptions(cwd=str(workspace), tools=list(CLAUDE_CODE_TOOLS), allowed_tools=["Read"])


def file_assistant_asking(workspace: Path, log: InvocationLog) -> ClaudeAgentOptions:
    """quick_start's file assistant where ``Write`` and ``Bash`` are not pre-approved: the
    plain run's permission callback is asked about them (tool_permission_callback.py's
    pattern), as the session asks a person."""
    return ClaudeAgentOptions(
        cwd=str(workspace),
        tools=list(CLAUDE_CODE_TOOLS),
        allowed_tools=["Read"],
        system_prompt="You are a helpful file assistant.",
    )
