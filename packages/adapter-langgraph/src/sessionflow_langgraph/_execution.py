"""Running one deferred tool call: the real LangChain tool, once, with its invocation."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from pydantic import ValidationError

from sessionflow.kit import DeferredToolExecution, ToolExecutionError, ToolInvocation
from sessionflow_langgraph._messages import message_text

__all__ = ["INVOCATION_METADATA_KEYS", "invocation_metadata", "run_tool"]

INVOCATION_METADATA_KEYS = (
    "sessionflow_idempotency_key",
    "sessionflow_session_id",
    "sessionflow_turn_id",
    "sessionflow_tool_call_id",
    "sessionflow_attempt",
)
"""Keys the tool's `RunnableConfig` metadata carries (a tool can take a ``config`` argument)."""


async def run_tool(
    tool: BaseTool | None, call: DeferredToolExecution, *, guard: BaseCallbackHandler | None = None
) -> str:
    """Run ``tool`` for ``call`` and return the text the model sees.

    Raises:
        ToolExecutionError: The tool is unknown, the arguments are not a JSON object or
            do not validate, the tool raised `ToolException` (or sessionflow's own
            `ToolExecutionError`), or it answered with an error `ToolMessage`.
        Exception: Anything else the tool raised; the session treats it as a crash.
    """
    record = call.tool_call
    if tool is None:
        raise ToolExecutionError(f"unknown tool {record.tool_name!r}")
    arguments = record.parsed_arguments()
    # The tool activity already made this the current invocation; the metadata repeats it.
    invocation = call.invocation
    tool_call = ToolCall(name=record.tool_name, args=arguments, id=record.tool_call_id, type="tool_call")
    config: RunnableConfig = {"metadata": invocation_metadata(invocation), "run_name": record.tool_name}
    if guard is not None:
        config["callbacks"] = [guard]
    try:
        result: object = await tool.ainvoke(tool_call, config)
    except ToolException as error:
        raise ToolExecutionError(str(error) or type(error).__name__) from None
    except ValidationError as error:
        raise ToolExecutionError(f"invalid arguments for tool {record.tool_name!r}: {error}") from None
    if isinstance(result, ToolMessage):
        text = message_text(result)
        if result.status == "error":
            raise ToolExecutionError(text)
        return text
    return result if isinstance(result, str) else json.dumps(result, default=str, ensure_ascii=False)


def invocation_metadata(invocation: ToolInvocation) -> dict[str, Any]:
    """The `RunnableConfig` metadata a tool of this call gets (`INVOCATION_METADATA_KEYS`)."""
    values = (
        invocation.idempotency_key,
        invocation.session_id,
        invocation.turn_id,
        invocation.tool_call_id,
        invocation.attempt,
    )
    return dict(zip(INVOCATION_METADATA_KEYS, values, strict=True))
