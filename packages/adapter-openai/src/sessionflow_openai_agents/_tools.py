"""Running a real tool once for a session tool step, and neutral tool specs as FunctionTools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

from agents import FunctionTool, ItemHelpers
from agents.tool import (
    _FailureHandlingFunctionToolInvoker,  # pyright: ignore[reportPrivateUsage]
    default_tool_timeout_error_message,
    maybe_invoke_function_tool_failure_error_function,
)
from agents.tool_context import ToolContext

from sessionflow import ToolEffect
from sessionflow.kit import (
    ToolExecutionError,
    ToolInvocation,
    ToolSpec,
    current_tool_invocation,
    effect_from_mcp_annotations,
    parse_tool_arguments,
)

__all__ = [
    "function_tool_from_spec",
    "invoke_function_tool",
    "mcp_effect",
    "run_function_tool",
    "sdk_tool_body",
    "tool_output_text",
]

ToolInvoker = Callable[[ToolContext[Any], str], Awaitable[Any]]


def mcp_effect(tool: FunctionTool) -> ToolEffect | None:
    """The effect an MCP tool's annotations imply, or None for a tool that is not from MCP."""
    annotations = tool.mcp_annotations
    if annotations is None:
        return None
    # mcp 2.x names the hints in snake_case; the wire (and the core's mapping) uses camelCase.
    return effect_from_mcp_annotations(
        {
            "readOnlyHint": getattr(annotations, "read_only_hint", None),
            "idempotentHint": getattr(annotations, "idempotent_hint", None),
        }
    )


async def run_function_tool(tool: FunctionTool, context: ToolContext[Any], arguments: str) -> str:
    """Run the real tool once and return the text the model sees (see `invoke_function_tool`)."""
    return tool_output_text(await invoke_function_tool(tool, context, arguments))


async def invoke_function_tool(tool: FunctionTool, context: ToolContext[Any], arguments: str) -> Any:
    """Run the real tool once and return what it returned (`tool_output_text` is what the model sees).

    The SDK turns a failure inside a tool into a message for the model through the tool's
    ``failure_error_function`` (by default a fixed "An error occurred" text). Here that
    message becomes a `ToolExecutionError`, so the session records the call as failed and
    shows the model the same text. A tool whose ``failure_error_function`` is None, or a
    hand-built `FunctionTool` whose ``on_invoke_tool`` raises, crashes instead: the error
    propagates and the session retries the step as the tool's effect allows.
    """
    work = _invoke(tool, context, arguments)
    if tool.timeout_seconds is None:
        return await work
    try:
        return await asyncio.wait_for(work, timeout=tool.timeout_seconds)
    except TimeoutError:
        if tool.timeout_behavior == "raise_exception":
            raise
        message = default_tool_timeout_error_message(
            tool_name=tool.name, timeout_seconds=tool.timeout_seconds
        )
        raise ToolExecutionError(message) from None


def sdk_tool_body(tool: FunctionTool) -> ToolInvoker | None:
    """The body inside the SDK's own invoker (`function_tool`, `as_tool`), or None when
    ``on_invoke_tool`` is something else: a hand-built one, or the SDK's wrapped by your code
    (tracing, logging), even with `functools.wraps`, which copies the invoker's attributes."""
    invoker: Any = tool.on_invoke_tool
    if not isinstance(invoker, _FailureHandlingFunctionToolInvoker):
        return None
    body: ToolInvoker = invoker._invoke_tool_impl  # pyright: ignore[reportPrivateUsage]
    return body


async def _invoke(tool: FunctionTool, context: ToolContext[Any], arguments: str) -> Any:
    # `function_tool` wraps its body in an invoker that swallows exceptions into the failure
    # message; calling the body directly lets us tell a failure from a successful result.
    # A wrapper of yours around it is called whole, as the SDK calls it.
    body = sdk_tool_body(tool)
    if body is None:
        return await tool.on_invoke_tool(context, arguments)
    try:
        return await body(context, arguments)
    except ToolExecutionError:
        raise
    except Exception as error:
        message = await maybe_invoke_function_tool_failure_error_function(
            function_tool=tool, context=context, error=error
        )
        if message is None:
            raise
        raise ToolExecutionError(message) from error


def tool_output_text(output: Any) -> str:
    """A tool's return value as the text the SDK would send to the model."""
    if isinstance(output, str):
        return output
    converted = cast(Any, ItemHelpers)._convert_tool_output(output)
    if isinstance(converted, str):
        return converted
    parts = cast(list[dict[str, Any]], converted)
    if all(part.get("type") == "input_text" for part in parts):
        return "".join(str(part.get("text", "")) for part in parts)
    return json.dumps(parts, ensure_ascii=False)


def function_tool_from_spec(spec: ToolSpec) -> FunctionTool:
    """A neutral `ToolSpec` as a `FunctionTool`; its handler gets the step's `ToolInvocation`.

    Outside a sessionflow tool step (a plain `Runner.run`), the invocation is built from the
    SDK's tool call ID with the ID as idempotency key.
    """

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        parsed = parse_tool_arguments(arguments)
        invocation = current_tool_invocation() or ToolInvocation(
            tool_call_id=context.tool_call_id, idempotency_key=context.tool_call_id, attempt=1
        )
        return await spec.call(parsed, invocation)

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=dict(spec.parameters),
        on_invoke_tool=invoke,
        # Neutral schemas need not meet the strict-mode rules (every property required, ...).
        strict_json_schema=False,
    )
