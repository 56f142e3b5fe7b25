"""Budgets and proposal checks: what the session refuses before a step runs.

Every limit is checked before the step it guards, never after: a turn that would exceed
a budget stops before the call, with a reason the next turn's model sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum

from sessionflow.session.messages import FrameworkMessage

__all__ = [
    "DEFAULT_MAX_STUCK",
    "Budget",
    "ProposalCode",
    "StopReason",
    "call_fingerprint",
    "estimate_tokens",
    "message_tokens",
    "tokens_of_size",
]

DEFAULT_MAX_STUCK = 3


class StopReason(StrEnum):
    """Why the session stopped a turn on its own."""

    STEP_BUDGET = "step_budget"
    TOOL_BUDGET = "tool_budget"
    TIME_BUDGET = "time_budget"
    COST_BUDGET = "cost_budget"
    REPEATED_CALL = "repeated_call"
    STUCK = "stuck"
    CONTINUE_LIMIT = "continue_limit"


class ProposalCode(StrEnum):
    """Why a proposed tool call was refused before any step was scheduled."""

    NOT_ALLOWED = "not_allowed"
    INVALID_ARGUMENTS = "invalid_arguments"
    REPEATED_CALL = "repeated_call"
    TOOL_BUDGET = "tool_budget"


@dataclass(frozen=True, kw_only=True)
class Budget:
    """Limits in plain numbers, as the workflow applies them (None means no limit).

    `input_price`/`output_price` are per token, in the currency of `max_session_cost`;
    the cost check takes the worst case of the next call: its whole estimated input plus
    `max_output_tokens` of output.
    """

    max_model_calls_per_turn: int | None = None
    max_tool_calls_per_turn: int | None = None
    max_turn_seconds: float | None = None
    max_session_cost: float | None = None
    input_price: float = 0.0
    output_price: float = 0.0
    max_output_tokens: int = 4096
    max_stuck: int = DEFAULT_MAX_STUCK

    def cost_of(self, input_tokens: int, output_tokens: int) -> float:
        return input_tokens * self.input_price + output_tokens * self.output_price

    def worst_case_next_call(self, estimated_input_tokens: int) -> float:
        return self.cost_of(estimated_input_tokens, self.max_output_tokens)


def estimate_tokens(text: str) -> int:
    """A deliberately generous token estimate (about 3 characters a token)."""
    return (len(text) + 2) // 3


def tokens_of_size(size: int) -> int:
    """`estimate_tokens` of a stored body, from its size in bytes."""
    # The same generous rate as `estimate_tokens` (about three bytes a token).
    return (size + 2) // 3


def message_tokens(message: FrameworkMessage) -> int:
    """`estimate_tokens` of one message: its stored body's size, or its text."""
    if message.body is not None:
        return tokens_of_size(message.body.size)
    return estimate_tokens(message.text or str(message.framework_item))


def call_fingerprint(tool_name: str, arguments: str) -> str:
    """Equal for the same tool with the same arguments, whatever their JSON spelling."""
    try:
        canonical = json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except ValueError:
        canonical = " ".join(arguments.split())
    return f"{tool_name}\n{canonical}"
