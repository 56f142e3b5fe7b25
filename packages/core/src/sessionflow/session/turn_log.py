"""Keeping each turn's record (`sessionflow.session.turn_records`) as the turn runs and ends."""

from __future__ import annotations

from dataclasses import replace

from sessionflow.session.approvals import FRAMEWORK_RULE, approval_reason
from sessionflow.session.events import AgentEventType
from sessionflow.session.model_fields import SessionFields
from sessionflow.session.tools import AgentToolCall
from sessionflow.session.turn_records import (
    MAX_TURN_CALLS_KEPT,
    MAX_TURN_RECORD_BYTES,
    MAX_TURN_RECORDS,
    MAX_TURN_STEPS_KEPT,
    STEP_TEXT_CHARS,
    TURN_STEP_TEXT_CHARS,
    TurnOutcome,
    TurnRecord,
    TurnStep,
    bounded_call_texts,
    cut,
    recorded_tool_call,
)
from sessionflow.session.usage import AgentUsage

__all__ = ["TurnLog"]


class TurnLog(SessionFields):
    """Records the running turn's steps and tool call times, and keeps ended turns' records."""

    def open_turn_record(self, *, message_id: str | None, user_sequence: int) -> None:
        self.turn_steps = []
        self.turn_steps_dropped = 0
        self.turn_tool_times = {}
        self.turn_message_id = message_id
        self.turn_user_sequence = user_sequence
        self.turn_usage_start = self.usage
        self.turn_cost_start = self.cost

    def record_model_step(self, step: str, text: str, tool_call_ids: list[str], now: str) -> TurnStep:
        """Record a model step that ended, with what the model wrote in it; returns the step."""
        kept, text_cut = cut(text, STEP_TEXT_CHARS)
        recorded = TurnStep(
            step=step, text=kept, text_cut=text_cut, tool_call_ids=tool_call_ids, ended_at=now
        )
        self.turn_steps.append(recorded)
        self._bound_turn_steps()
        return recorded

    def _bound_turn_steps(self) -> None:
        # The running turn's steps ride in the model (its continue-as-new input and every
        # `list_turns`): a turn of thousands of steps keeps the newest, and the oldest texts
        # give way first, while the newest step keeps its text whole.
        excess = len(self.turn_steps) - MAX_TURN_STEPS_KEPT
        if excess > 0:
            del self.turn_steps[:excess]
            self.turn_steps_dropped += excess
        total = sum(len(s.text) for s in self.turn_steps)
        for index, step in enumerate(self.turn_steps[:-1]):
            if total <= TURN_STEP_TEXT_CHARS:
                break
            if step.text:
                total -= len(step.text)
                self.turn_steps[index] = replace(step, text="", text_cut=step.text_cut + len(step.text))

    def emit_model_step(self, recorded: TurnStep) -> None:
        """The `model_step_completed` event of a recorded step, for clients that follow events."""
        self.emit(
            AgentEventType.MODEL_STEP_COMPLETED,
            {
                "step": recorded.step,
                "text": recorded.text,
                "text_cut": recorded.text_cut,
                "tool_calls": [
                    {"tool_call_id": call_id, "tool_name": self.tool_calls[call_id].tool_name}
                    for call_id in recorded.tool_call_ids
                    if call_id in self.tool_calls
                ],
            },
            step=recorded.step,
        )

    def note_tool_started(self, tool_call_id: str, now: str) -> None:
        self.turn_tool_times[tool_call_id] = [now]

    def note_tool_finished(self, tool_call_id: str, now: str) -> None:
        times = self.turn_tool_times.get(tool_call_id)
        if times:
            self.turn_tool_times[tool_call_id] = [times[0], now]

    def running_turn_record(self) -> TurnRecord | None:
        """The running turn's record as it stands; None between turns."""
        turn_id = self.state.turn_id
        if turn_id is None:
            return None
        return self._turn_record(turn_id, TurnOutcome.RUNNING, ended_at=None, error=None, note_sequence=None)

    def turn_records_view(self) -> list[TurnRecord]:
        """The kept records, oldest first, the running turn's last."""
        running = self.running_turn_record()
        return [*self.turn_records, running] if running is not None else list(self.turn_records)

    def close_turn_record(
        self, outcome: TurnOutcome, *, ended_at: str, error: str | None, note_sequence: int | None
    ) -> None:
        """Keep the running turn's record as it ended, dropping the oldest beyond the bounds."""
        turn_id = self._require_turn()
        record = self._turn_record(
            turn_id, outcome, ended_at=ended_at, error=error, note_sequence=note_sequence
        )
        self.turn_records.append(record)
        sizes = [r.approximate_bytes() for r in self.turn_records]
        while len(self.turn_records) > 1 and (
            len(self.turn_records) > MAX_TURN_RECORDS or sum(sizes) > MAX_TURN_RECORD_BYTES
        ):
            self.turn_records.pop(0)
            sizes.pop(0)
        self.turn_steps = []
        self.turn_steps_dropped = 0
        self.turn_tool_times = {}

    def _turn_record(
        self,
        turn_id: str,
        outcome: TurnOutcome,
        *,
        ended_at: str | None,
        error: str | None,
        note_sequence: int | None,
    ) -> TurnRecord:
        calls = sorted(self.tool_calls.values(), key=lambda r: r.deferral_order)
        dropped = max(0, len(calls) - MAX_TURN_CALLS_KEPT)
        calls = calls[dropped:]
        return TurnRecord(
            turn_id=turn_id,
            number=self.state.turn_count,
            message_id=self.turn_message_id,
            outcome=outcome,
            started_at=self.turn_started_at,
            ended_at=ended_at,
            error=error,
            user_sequence=self.turn_user_sequence,
            note_sequence=note_sequence,
            steps=list(self.turn_steps),
            steps_dropped=self.turn_steps_dropped,
            tool_calls=bounded_call_texts(
                [
                    recorded_tool_call(r, self.turn_tool_times.get(r.tool_call_id, []), _reason(r))
                    for r in calls
                ]
            ),
            tool_calls_dropped=dropped,
            usage=_difference(self.usage, self.turn_usage_start or AgentUsage()),
            cost=self.cost - (self.turn_cost_start or 0.0),
        )


def _reason(record: AgentToolCall) -> str | None:
    if record.approval_source is None:
        return None
    if record.question is not None:
        return "the agent asks a question"
    if record.approval_source == "framework":
        return FRAMEWORK_RULE
    return approval_reason(record.policy)


def _difference(total: AgentUsage, start: AgentUsage) -> AgentUsage:
    return replace(
        total,
        requests=total.requests - start.requests,
        input_tokens=total.input_tokens - start.input_tokens,
        output_tokens=total.output_tokens - start.output_tokens,
    )
