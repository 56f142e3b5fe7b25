"""A tool that defers itself: `ApprovalRequired` and `CallDeferred` as durable waits.

In a plain run, a tool that raises `ApprovalRequired` (when ``ctx.tool_call_approved`` is
False) or `CallDeferred` ends the run with `DeferredToolRequests`; the application asks a
person, or gets the result from outside, and resumes with `DeferredToolResults`: an
approved call runs again, now approved; a deferred call's result is the one given.

A tool step cannot wait. When a call's step ends with such a deferral (its account on the
failed record, `deferral_account`), the next model step makes no request: it defers a
call of its own for each, and the turn waits durably, with the session's deadline:

* ``<id>-approval``: the same tool and arguments, with ``framework_approval="required"``;
  approved, its step runs the tool with ``ctx.tool_call_approved`` True (rejected, the
  model sees the denial);
* ``<id>-result``: a question (`DeferredToolCall.question`) answered through the session
  API (``resolve_interrupt(..., answer=...)``); the answer is the call's result.

When no call waits any more, the model step resumes Pydantic AI with every call's
outcome under the model's call ID, as if each had run once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

from sessionflow import AgentToolCall, AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall
from sessionflow_pydantic_ai._retries import read_failure_account

__all__ = [
    "WaitKind",
    "WaitingCall",
    "deferral_account",
    "plain_deferred",
    "resolved_record",
    "split_as_plain",
    "waits_for",
]

WaitKind = Literal["approval", "result"]

_OUTCOMES: dict[str, WaitKind] = {"approval_required": "approval", "call_deferred": "result"}
_ACCOUNT_FORMAT = "sessionflow-pydantic-ai/tool-failure/1"
# A result from outside is data, not an act of this worker: nothing to retry or hold.
_RESULT_POLICY = ToolPolicy(effect=ToolEffect.READ, requires_approval=False)


@dataclass(frozen=True)
class WaitingCall:
    """The session's call standing for a model call that deferred itself."""

    call: str
    """The model's call ID."""
    kind: WaitKind
    metadata: Any = None
    """What the tool attached (`ApprovalRequired(metadata=...)`, `CallDeferred(metadata=...)`)."""

    def to_json(self) -> dict[str, Any]:
        return {"call": self.call, "kind": self.kind, "metadata": self.metadata}

    @staticmethod
    def from_json(raw: Any) -> WaitingCall:
        data = cast(dict[str, Any], raw)
        return WaitingCall(str(data["call"]), cast(WaitKind, data["kind"]), data.get("metadata"))


def deferral_account(kind: WaitKind, metadata: Mapping[str, Any] | None) -> str:
    """The failed step's account of a deferral (read back by `waits_for`)."""
    outcome = "approval_required" if kind == "approval" else "call_deferred"
    return json.dumps(
        {"format": _ACCOUNT_FORMAT, "outcome": outcome, "content": dict(metadata or {})},
        separators=(",", ":"),
        default=str,
    )


def waits_for(
    deferred: list[str], record: Callable[[str], AgentToolCall], waiting: Mapping[str, WaitingCall]
) -> list[tuple[DeferredToolCall, WaitingCall]]:
    """The calls to defer for the model calls whose steps deferred themselves, in model order."""
    asked = {w.call for w in waiting.values()}
    calls: list[tuple[DeferredToolCall, WaitingCall]] = []
    for call_id in deferred:
        if call_id in asked:
            continue
        found = record(call_id)
        if found.status is not AgentToolCallStatus.FAILED:
            continue
        account = read_failure_account(found.state_update)
        kind = _OUTCOMES.get(account.outcome) if account is not None else None
        if kind is None or account is None:
            continue
        wait = WaitingCall(call_id, kind, account.content)
        calls.append((_deferred_call(found, wait), wait))
    return calls


def resolved_record(
    call_id: str, record: Callable[[str], AgentToolCall], waiting: Mapping[str, WaitingCall]
) -> AgentToolCall:
    """The outcome of a model call: its own record, or that of the call standing for it."""
    for own_id, wait in waiting.items():
        if wait.call == call_id:
            return replace(record(own_id), tool_call_id=call_id, tool_name=record(call_id).tool_name)
    return record(call_id)


def _deferred_call(found: AgentToolCall, wait: WaitingCall) -> DeferredToolCall:
    if wait.kind == "approval":
        return DeferredToolCall(
            tool_call_id=f"{found.tool_call_id}-approval",
            tool_name=found.tool_name,
            arguments=found.arguments,
            policy=found.policy,
            framework_approval="required",
        )
    return DeferredToolCall(
        tool_call_id=f"{found.tool_call_id}-result",
        tool_name=found.tool_name,
        arguments=found.arguments,
        policy=_RESULT_POLICY,
        question=(
            f"{found.tool_name}({found.arguments}) waits for a result from outside"
            + (f" ({json.dumps(wait.metadata, default=str)})" if wait.metadata else "")
            + ": answer with the result."
        ),
    )


def split_as_plain(messages: list[ModelMessage], deferred: set[str]) -> list[ModelMessage]:
    """The resumed step's messages with the results split as the plain run stores them.

    A plain run that stops for some of a response's calls (`DeferredToolRequests`) has
    stored the other calls' results in a request of its own before it stops; the run that
    resumes it stores the deferred calls' results in the next request. A session resumes
    once, with every result in one request: this splits that request the same way (what
    the model is sent is the same either way).
    """
    first = messages[0] if messages else None
    if not isinstance(first, ModelRequest) or not deferred:
        return messages
    later = [p for p in first.parts if isinstance(p, ToolReturnPart) and p.tool_call_id in deferred]
    earlier = [p for p in first.parts if p not in later]
    if not later or not any(isinstance(p, ToolReturnPart) for p in earlier):
        return messages
    return [replace(first, parts=earlier), replace(first, parts=later), *messages[1:]]


def plain_deferred(
    deferred: list[str], record: Callable[[str], AgentToolCall], waiting: Mapping[str, WaitingCall]
) -> set[str]:
    """The calls a plain run would have stopped for: Pydantic AI's own approvals and the
    calls that deferred themselves."""
    waited = {w.call for w in waiting.values()}
    return {c for c in deferred if c in waited or record(c).framework_approval == "required"}
