"""The turn state machine: a turn's status moves from its start to its end.

A turn starts running the model; the model step completes it, asks for tool calls
(running tools until every call is final) or asks for another model call; a failure
ends it with an error. Each move checks it is legal here, so the workflow cannot leave
a turn half-moved, and a failed turn leaves only final tool call records behind.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sessionflow.session.approvals import MAX_ANSWER_BYTES, decide_approval
from sessionflow.session.bodies import cap_text
from sessionflow.session.carry import carry_of
from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEventType
from sessionflow.session.guardrails import Budget, StopReason
from sessionflow.session.interrupts import Interrupts
from sessionflow.session.messages import FrameworkMessage
from sessionflow.session.outcomes import ContinueRequested, ToolCallsRequested, TurnCompleted
from sessionflow.session.spending import Spending
from sessionflow.session.state import AgentStatus
from sessionflow.session.steering import Steering
from sessionflow.session.tools import AgentToolCall, AgentToolCallStatus, validate_tool_call_ids
from sessionflow.session.transcript import Transcript
from sessionflow.session.turn_log import TurnLog
from sessionflow.session.turn_records import TurnOutcome
from sessionflow.session.verify import checked_verify_basis

__all__ = ["TurnMachine"]


class TurnMachine(Transcript, Interrupts, Spending, TurnLog, Steering):
    """Moves the running turn (`state`, `run_state`, the `turn_*` fields) through its statuses."""

    def begin_turn(self, now: datetime | None = None, *, message_id: str | None = None) -> str:
        """Open the next turn and return its ID (`turn-<n>`).

        `message_id` is the ID its user message was sent with: its `turn_started` event
        names it, so the client that sent the message knows which turn is its own.
        """
        if self.turn_active:
            raise SessionStateError(f"turn {self.state.turn_id!r} is still running")
        number = self.state.turn_count + 1
        turn_id = f"turn-{number}"
        self.state = replace(self.state, status=AgentStatus.RUNNING_MODEL, turn_id=turn_id, turn_count=number)
        self.model_step = ""
        self.turn_started_at = now.isoformat() if now is not None else ""
        self.turn_prefix_count = len(self.messages)
        self.turn_prefix_digest = self.digest
        self.turn_model_calls = 0
        self.turn_tool_calls = 0
        self.turn_continues = 0
        self.state_updates_applied_through = 0
        self.turn_fingerprints = []
        self.consecutive_rejections = 0
        self.stop_reason = None
        self.stop_detail = ""
        self.open_turn_record(message_id=message_id, user_sequence=self.next_sequence)
        started: dict[str, object] = {"sequence": self.next_sequence}
        if message_id is not None:
            started["message_id"] = message_id
        self.emit(AgentEventType.TURN_STARTED, started, step=f"{turn_id}/turn")
        return turn_id

    def complete_turn(
        self, outcome: TurnCompleted, budget: Budget | None = None, *, now: datetime | None = None
    ) -> None:
        """Append the turn's messages in one commit and wait for the next user message."""
        self._require_turn()
        self.check_supersedable(outcome.superseded)  # before anything changes
        self.replace_turn_messages(outcome.replaced_messages)
        self.supersede_messages(outcome.superseded, self.state.turn_count)
        self.record_usage(outcome.usage, budget)
        for message in outcome.new_messages:
            self.append_message(message)
        self.carried_state, self.carried_state_ref = carry_of(outcome)
        self.framework_state = outcome.framework_state
        self.framework_state_omitted = list(outcome.framework_state_omitted)
        turn_id = self._require_turn()
        self.emit(
            AgentEventType.TURN_COMPLETED, {"message_count": len(self.messages)}, step=f"{turn_id}/turn"
        )
        self.close_turn_record(TurnOutcome.COMPLETED, ended_at=_iso(now), error=None, note_sequence=None)
        self._end_turn(error=None, outcome=TurnOutcome.COMPLETED)

    def request_tools(
        self,
        outcome: ToolCallsRequested,
        *,
        now: datetime,
        deadline: timedelta | None,
        budget: Budget | None = None,
    ) -> list[AgentToolCall]:
        """Record the deferred calls (raises InvalidToolCallError for bad IDs) and their interrupts.

        Proposals are screened before anything is scheduled: a call the worker's check
        refused, a repeat of an earlier call, or a call past the tool budget is recorded as
        rejected with its code, and the model sees why. When the turn must stop (a repeat, a
        budget, or too many refusals in a row) `stop_reason` is set. Returns the records.
        """
        turn_id = self._require_turn()
        if not outcome.framework_run_state and outcome.run_state_ref is None:
            raise SessionStateError("ToolCallsRequested needs a non-empty framework_run_state")
        if not outcome.tool_calls:
            raise SessionStateError("ToolCallsRequested needs at least one tool call")
        validate_tool_call_ids(outcome.tool_calls, self.tool_calls)
        if any(not r.is_final for r in self.tool_calls.values()):
            raise SessionStateError("the previous tool calls of this turn are not final")
        # Decided before anything is recorded, so a runner's mistake leaves no half batch.
        decisions = [decide_approval(call) for call in outcome.tool_calls]
        bases = [checked_verify_basis(call) for call in outcome.tool_calls]
        self.record_usage(outcome.usage, budget)
        applied_through = len(self.tool_calls)  # the step that made this batch applied every earlier update
        created: list[AgentToolCall] = []
        batch = zip(outcome.tool_calls, decisions, bases, strict=True)
        for order, (call, decision, basis) in enumerate(batch, start=applied_through + 1):
            refusal = self._screen(call, budget)
            needs_approval = refusal is None and decision.waits
            interrupt_id = f"{turn_id}:{call.tool_call_id}" if needs_approval else None
            question = cap_text(call.question, MAX_ANSWER_BYTES, what="question") if call.question else None
            record = self._add_deferred(
                call, decision, order=order, verify_basis=basis, interrupt_id=interrupt_id, question=question
            )
            if refusal is not None:
                record = self.move_tool_call(call.tool_call_id, AgentToolCallStatus.REJECTED, error=refusal)
            elif interrupt_id is not None:
                self._raise_interrupt(
                    interrupt_id, call, decision, question=question, now=now, deadline=deadline
                )
            created.append(record)
        max_stuck = budget.max_stuck if budget is not None else None
        if self.stop_reason is None and max_stuck is not None and self.consecutive_rejections >= max_stuck:
            self._request_stop(
                StopReason.STUCK, f"{self.consecutive_rejections} proposals in a row were refused"
            )
        self.run_state = outcome.framework_run_state or None
        self.run_state_ref = outcome.run_state_ref
        self.state_updates_applied_through = applied_through
        self.state = replace(self.state, status=AgentStatus.RUNNING_TOOLS)
        return created

    def continue_model(
        self, outcome: ContinueRequested, *, max_continues: int, budget: Budget | None = None
    ) -> None:
        """The model step asked for another model call: keep its run state for that call.

        Its usage counts like any model call's. The continue past `max_continues` in one
        turn is not followed: `stop_reason` is set, and the turn stops before another call.
        """
        self._require_turn()
        if not outcome.framework_run_state and outcome.run_state_ref is None:
            raise SessionStateError("ContinueRequested needs a non-empty framework_run_state")
        if not self.tools_final():
            raise SessionStateError("cannot continue the turn before every tool call is final")
        self.record_usage(outcome.usage, budget)
        self.turn_continues += 1
        self.emit(AgentEventType.MODEL_CONTINUED, {"note": outcome.note, "continues": self.turn_continues})
        if self.turn_continues > max_continues:
            self._request_stop(
                StopReason.CONTINUE_LIMIT,
                f"the model asked to continue {self.turn_continues} times in this turn; the limit is {max_continues}",
            )
            return
        self.run_state = outcome.framework_run_state or None
        self.run_state_ref = outcome.run_state_ref
        self.state_updates_applied_through = len(self.tool_calls)  # this step applied them all
        self.state = replace(self.state, status=AgentStatus.RUNNING_MODEL)

    def resume_model(self) -> None:
        """All tool calls are final: the next model call continues the turn."""
        if not self.tools_final():
            raise SessionStateError("cannot resume the turn before every tool call is final")
        self.state = replace(self.state, status=AgentStatus.RUNNING_MODEL)

    def fail_turn(
        self, error: str, note: FrameworkMessage | None, *, reason: str = "error", now: datetime | None = None
    ) -> None:
        """End the running turn with an error, leaving the failure note when one is given.

        `reason` is ``"error"``, ``"cancelled"``, or the `StopReason` of a turn the session
        stopped on its own; the turn's record ends failed, cancelled or stopped accordingly.
        """
        self._require_turn()
        # What the user said to steer the turn stays, for the next turn's model to see:
        # the messages the failed run held are lost with it.
        for steered in self.turn_steered:
            self.store_user_message(steered.message)
        note_sequence = self.store_user_message(note).sequence if note is not None else None
        turn_id = self._require_turn()
        self.emit(AgentEventType.TURN_FAILED, {"error": error, "reason": reason}, step=f"{turn_id}/turn")
        outcome = {"error": TurnOutcome.FAILED, "cancelled": TurnOutcome.CANCELLED}.get(
            reason, TurnOutcome.STOPPED
        )
        self.close_turn_record(outcome, ended_at=_iso(now), error=error, note_sequence=note_sequence)
        self._end_turn(error=error, outcome=outcome)

    def _end_turn(self, *, error: str | None, outcome: TurnOutcome) -> None:
        self.requeue_steered()
        self.tool_calls = {}
        self.run_state = None
        self.run_state_ref = None
        self.pending_interrupts = []
        self.turn_settings = {}
        self.state = replace(
            self.state,
            status=AgentStatus.WAITING_FOR_USER_MESSAGE,
            turn_id=None,
            last_turn_error=error,
            last_turn_outcome=outcome.value,
        )


def _iso(now: datetime | None) -> str:
    return now.isoformat() if now is not None else ""
