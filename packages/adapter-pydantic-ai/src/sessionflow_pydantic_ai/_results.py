"""The session's final tool call records as Pydantic AI `DeferredToolResults`."""

from __future__ import annotations

from collections.abc import Callable

from pydantic_ai import DeferredToolResults, ToolDenied

from sessionflow.session import AgentToolCall, AgentToolCallStatus, describe_tool_call_outcome

__all__ = ["deferred_tool_results"]


def deferred_tool_results(
    deferred: list[str], response_call_ids: list[str], record: Callable[[str], AgentToolCall]
) -> DeferredToolResults:
    """Results keyed by tool call ID for every call of the response that asked for tools.

    The model sees exactly `describe_tool_call_outcome(record)`, the text every adapter
    sends: the output of a call that succeeded, and otherwise a sentence saying the call
    failed, was rejected (with the person's message verbatim), or may or may not have
    taken effect. A rejection goes in as `ToolDenied`, so Pydantic AI's history records
    it as denied. A failure goes in as plain text rather than `ToolFailed`, which the
    OpenAI models would wrap as ``{"error": ...}``.

    Calls the session did not run are output tool calls. Pydantic AI only needs to know
    they belong to this resume to process them; the value given for them is not used.
    """
    results = DeferredToolResults()
    for tool_call_id in deferred:
        call = record(tool_call_id)
        text = describe_tool_call_outcome(call)
        if call.status is AgentToolCallStatus.REJECTED:
            results.approvals[tool_call_id] = ToolDenied(text)
        else:
            results.calls[tool_call_id] = text
    settled = set(deferred)
    for tool_call_id in response_call_ids:
        if tool_call_id not in settled:
            results.calls[tool_call_id] = ""
    return results
