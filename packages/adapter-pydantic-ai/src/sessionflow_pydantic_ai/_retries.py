"""Pydantic AI's retries across steps: a tool's `ModelRetry` and its retry budget.

In one plain run, a tool that raises `ModelRetry` (or is called with arguments that fail
validation) answers the model with a retried `ToolReturnPart`, and its count in
``ctx.retries`` grows by one per step it failed in; once the count reaches the tool's
``max_retries`` the next such failure ends the run (`UnexpectedModelBehavior`). A step
in which the tool succeeds clears its count. A session runs every call in a tool step of
its own and every model request in a model step, each a fresh `Agent.iter`, so the counts
travel in the run state (`RetryBudget`) and the tool step's failure travels as its account
(`failure_account`, on the failed call's record): the next model step hands Pydantic AI
the failure as it was (`ModelRetry`, `ToolFailed`) and charges the budget as the plain run
would, with the same error text when it is spent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic_ai import ModelRetry, ToolFailed
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryInfo, ToolReturnPart

from sessionflow.kit import TurnAborted

__all__ = ["FailureAccount", "RetryBudget", "failure_account", "read_failure_account", "record_attempts"]

_FORMAT = "sessionflow-pydantic-ai/tool-failure/1"


@dataclass(frozen=True)
class FailureAccount:
    """How a tool call failed, as Pydantic AI reported it in the tool step."""

    outcome: str
    """``"retried"`` (the model is asked to fix the call) or ``"failed"`` (`ToolFailed`)."""
    content: Any
    """The retry prompt or failure message: text, or validation errors as JSON."""
    cause: str | None = None
    """A retry's cause (``"model_retry"``, ``"validation"``, ...)."""
    max_retries: int | None = None
    """The tool's retry budget, as the tool step's run knew it."""

    def as_result(self) -> ModelRetry | ToolFailed:
        """The result that makes Pydantic AI record the same part."""
        if self.outcome == "failed":
            return ToolFailed(str(self.content))
        text = self.content if isinstance(self.content, str) else json.dumps(self.content)
        return ModelRetry(text)


def failure_account(part: ToolReturnPart) -> str:
    """The tool step's failed part, for the next model step (`ToolExecutionError.state_update`)."""
    retry = part.retry
    return json.dumps(
        {
            "format": _FORMAT,
            "outcome": part.outcome,
            "content": part.content,
            "cause": retry.cause if retry is not None else None,
            "max_retries": retry.max_retries if retry is not None else None,
        },
        separators=(",", ":"),
        default=str,
    )


def read_failure_account(text: str | None) -> FailureAccount | None:
    """The account a failed call's record carries; None for a failure without one."""
    if text is None:
        return None
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    if not isinstance(raw, dict) or cast(dict[str, Any], raw).get("format") != _FORMAT:
        return None
    data = cast(dict[str, Any], raw)
    return FailureAccount(
        outcome=str(data["outcome"]),
        content=data.get("content"),
        cause=cast(str | None, data.get("cause")),
        max_retries=cast(int | None, data.get("max_retries")),
    )


@dataclass(frozen=True)
class RetryBudget:
    """The retries a turn has used: per tool (``ctx.retries``) and for its output."""

    tools: Mapping[str, int] = field(default_factory=lambda: cast(dict[str, int], {}))
    output: int = 0

    def charge(
        self, failed: Mapping[str, tuple[str, FailureAccount]], succeeded: Iterable[str]
    ) -> tuple[RetryBudget, dict[str, RetryInfo[Any]]]:
        """Charge one step's tool results, as Pydantic AI's tool manager does between steps.

        ``failed`` maps a retried call's ID to its tool name and account; ``succeeded`` names
        the tools that returned. Returns the budget after the step and, per retried call, the
        `RetryInfo` its part records (the attempt it was, of how many).

        Raises:
            TurnAborted: A tool had used its whole budget: Pydantic AI's own text.
        """
        infos: dict[str, RetryInfo[Any]] = {}
        for call_id, (name, account) in failed.items():
            used = self.tools.get(name, 0)
            limit = account.max_retries if account.max_retries is not None else 1
            if used >= limit:
                raise TurnAborted(
                    f"Tool {name!r} exceeded max retries count of {limit}. Consider raising the retry "
                    "limit, or see the docs on tool retries: "
                    "https://pydantic.dev/docs/ai/tools-toolsets/tools-advanced/#tool-retries"
                )
            infos[call_id] = RetryInfo(account.cause or "model_retry", attempt=used + 1, max_retries=limit)
        done = set(succeeded)
        tools = {name: count for name, count in self.tools.items() if name not in done}
        for name in {name for name, _ in failed.values()}:
            tools[name] = self.tools.get(name, 0) + 1
        return RetryBudget(tools, self.output), infos

    def to_json(self) -> dict[str, Any]:
        return {"tools": dict(self.tools), "output": self.output}

    @classmethod
    def from_json(cls, raw: Any) -> RetryBudget:
        if not isinstance(raw, dict):
            return cls()
        data = cast(dict[str, Any], raw)
        return cls(
            {str(k): int(v) for k, v in cast(dict[str, Any], data.get("tools") or {}).items()},
            int(data.get("output") or 0),
        )


def record_attempts(messages: Iterable[ModelMessage], infos: Mapping[str, RetryInfo[Any]]) -> None:
    """Give the retried parts the attempt the plain run records (never sent to the model).

    Pydantic AI records a retry handed in as a deferred result without its place in the
    budget; the plain run's part says which attempt it was, of how many.
    """
    if not infos:
        return
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.tool_call_id in infos and part.outcome == "retried":
                part.retry = infos[part.tool_call_id]
