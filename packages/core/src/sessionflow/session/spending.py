"""What a session spends (usage, cost, model and tool calls) and the guardrails that bound it.

Every limit is checked before the step it guards (see `guardrails`): the next model call
against the step, time and cost budgets, each proposed tool call against the tool budget
and the loop checks. A limit reached sets `stop_reason`, and the turn stops before its
next call.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from sessionflow.session.events import AgentEventType
from sessionflow.session.guardrails import (
    Budget,
    ProposalCode,
    StopReason,
    call_fingerprint,
    estimate_tokens,
    message_tokens,
    tokens_of_size,
)
from sessionflow.session.model_fields import SessionFields
from sessionflow.session.tools import DeferredToolCall
from sessionflow.session.usage import AgentUsage

__all__ = ["Spending"]


class Spending(SessionFields):
    """Counts usage and cost (`usage`, `cost`, `turn_*` counters) and checks the budgets."""

    def record_usage(self, usage: AgentUsage, budget: Budget | None = None) -> None:
        self.usage = self.usage + usage
        if usage.input_tokens:
            self.last_input_tokens = usage.input_tokens
        if budget is not None:
            self.cost += budget.cost_of(usage.input_tokens, usage.output_tokens)
        self.emit(
            AgentEventType.USAGE_RECORDED,
            {"recorded": asdict(usage), "session": asdict(self.usage), "session_cost": self.cost},
        )

    def count_model_call(self) -> None:
        self.turn_model_calls += 1

    def budget_stop_before_model_call(
        self, budget: Budget | None, now: datetime
    ) -> tuple[StopReason, str] | None:
        """The budget the next model call would break, checked before the call is made."""
        if budget is None:
            return None
        if (
            budget.max_model_calls_per_turn is not None
            and self.turn_model_calls >= budget.max_model_calls_per_turn
        ):
            return StopReason.STEP_BUDGET, f"the turn made {self.turn_model_calls} model calls, the limit"
        if budget.max_turn_seconds is not None and self.turn_started_at:
            elapsed = (now - datetime.fromisoformat(self.turn_started_at)).total_seconds()
            if elapsed >= budget.max_turn_seconds:
                return (
                    StopReason.TIME_BUDGET,
                    f"the turn ran {elapsed:.0f} s of {budget.max_turn_seconds:.0f} s",
                )
        if budget.max_session_cost is not None:
            worst = budget.worst_case_next_call(self.estimated_next_input_tokens())
            if self.cost + worst > budget.max_session_cost:
                return StopReason.COST_BUDGET, (
                    f"the next call could cost {worst:.6f}, and the session has spent {self.cost:.6f} "
                    f"of {budget.max_session_cost:.6f}"
                )
        return None

    def estimated_next_input_tokens(self) -> int:
        """The last call's input plus everything added since, estimated generously."""
        added = 0
        turn_id = self.state.turn_id
        for stored in reversed(self.messages):
            if stored.turn_id != turn_id:
                break
            added += message_tokens(stored.message)
        for record in self.tool_calls.values():
            output = (
                tokens_of_size(record.output_ref.size)
                if record.output_ref
                else estimate_tokens(record.output or "")
            )
            added += output + estimate_tokens((record.error or "") + record.arguments)
        return self.last_input_tokens + added

    def _screen(self, call: DeferredToolCall, budget: Budget | None) -> str | None:
        """The refusal (`<code>: <message>`) for one proposal, or None to accept it.

        Loop and budget checks apply when the session has a budget (guardrails on).
        """
        if call.proposal_error:
            self.consecutive_rejections += 1
            return call.proposal_error
        if budget is None:
            return None
        max_tools = budget.max_tool_calls_per_turn
        fingerprint = call_fingerprint(call.tool_name, call.arguments)
        if fingerprint in self.turn_fingerprints and not call.policy.allow_repeats:
            self.consecutive_rejections += 1
            self._request_stop(
                StopReason.REPEATED_CALL, f"{call.tool_name} was called again with the same arguments"
            )
            return f"{ProposalCode.REPEATED_CALL.value}: this exact call already ran in this turn"
        if max_tools is not None and self.turn_tool_calls >= max_tools:
            self._request_stop(
                StopReason.TOOL_BUDGET, f"the turn reached its limit of {max_tools} tool calls"
            )
            return f"{ProposalCode.TOOL_BUDGET.value}: the turn reached its limit of {max_tools} tool calls"
        self.consecutive_rejections = 0
        self.turn_fingerprints.append(fingerprint)
        self.turn_tool_calls += 1
        return None

    def _request_stop(self, reason: StopReason, detail: str) -> None:
        # The first reason wins: it is what stopped the turn, later ones only followed from it.
        if self.stop_reason is None:
            self.stop_reason = reason.value
            self.stop_detail = detail
