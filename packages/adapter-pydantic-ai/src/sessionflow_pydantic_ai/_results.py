"""The session's final tool call records as Pydantic AI `DeferredToolResults`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import DeferredToolResults, ToolDenied
from pydantic_ai.messages import RetryInfo

from sessionflow import AgentToolCall, AgentToolCallStatus
from sessionflow.kit import describe_tool_call_outcome
from sessionflow_pydantic_ai._retries import FailureAccount, RetryBudget, read_failure_account

__all__ = ["StepResults", "deferred_tool_results"]


@dataclass(frozen=True)
class StepResults:
    """The results to resume with, the retry budget after them, and the retried parts' attempts."""

    results: DeferredToolResults
    budget: RetryBudget
    attempts: dict[str, RetryInfo[Any]] = field(default_factory=lambda: {})


def deferred_tool_results(
    deferred: list[str],
    response_call_ids: list[str],
    record: Callable[[str], AgentToolCall],
    budget: RetryBudget,
    values: Mapping[str, Any],
) -> StepResults:
    """Results keyed by tool call ID for every call of the response that asked for tools.

    The model sees exactly `describe_tool_call_outcome(record)`, the text every adapter
    sends, for a call that succeeded, was rejected (with the person's message verbatim),
    or may or may not have taken effect. A rejection goes in as `ToolDenied`, so Pydantic
    AI's history records it as denied. A failure Pydantic AI itself reported in the tool
    step (`ModelRetry`, invalid arguments, `ToolFailed`) goes back as that failure and is
    charged against the tool's retry budget (`_retries`); any other failure goes in as
    plain text rather than `ToolFailed`, which the OpenAI models would wrap as ``{"error": ...}``.

    A call that returned a value other than text (`values`, by call ID) goes in as that
    value, so the history keeps it as the plain run's does.

    Calls the session did not run are output tool calls. Pydantic AI only needs to know
    they belong to this resume to process them; the value given for them is not used.

    Raises:
        TurnAborted: A tool's retry budget was spent, as the plain run would end.
    """
    results = DeferredToolResults()
    retried: dict[str, tuple[str, FailureAccount]] = {}
    succeeded: list[str] = []
    for tool_call_id in deferred:
        call = record(tool_call_id)
        account = (
            read_failure_account(call.state_update) if call.status is AgentToolCallStatus.FAILED else None
        )
        if account is not None:
            results.calls[tool_call_id] = account.as_result()
            if account.outcome == "retried":
                retried[tool_call_id] = (call.tool_name, account)
            continue
        if call.status is AgentToolCallStatus.SUCCEEDED:
            succeeded.append(call.tool_name)
            if tool_call_id in values:
                results.calls[tool_call_id] = values[tool_call_id]
                continue
        text = describe_tool_call_outcome(call)
        if call.status is AgentToolCallStatus.REJECTED and call.approval_source == "framework":
            # Only Pydantic AI's own rule held the call: its words, or the person's message.
            results.approvals[tool_call_id] = (
                ToolDenied(call.rejection_message) if call.rejection_message else ToolDenied()
            )
        elif call.status is AgentToolCallStatus.REJECTED:
            results.approvals[tool_call_id] = ToolDenied(text)
        else:
            results.calls[tool_call_id] = text
    settled = set(deferred)
    for tool_call_id in response_call_ids:
        if tool_call_id not in settled:
            results.calls[tool_call_id] = ""
    after, attempts = budget.charge(retried, succeeded)
    return StepResults(results, after, attempts)
