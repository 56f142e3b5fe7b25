"""Interrupts: tool calls waiting for a person (an approval or a question) and their answers.

A call that needs a person is recorded awaiting approval and raises an interrupt, named
`<turn_id>:<tool_call_id>`. The interrupt ends when someone answers it, its deadline
passes, or the turn is cancelled; each way moves the call on and emits the resolution.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sessionflow.session.approvals import ApprovalDecision, check_answer
from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEventType
from sessionflow.session.state import AgentInterrupt
from sessionflow.session.tool_call_records import ToolCallRecords
from sessionflow.session.tools import AgentToolCall, AgentToolCallStatus, DeferredToolCall

__all__ = ["APPROVAL_EXPIRED", "Interrupts"]

APPROVAL_EXPIRED = "The approval deadline passed before anyone answered."


class Interrupts(ToolCallRecords):
    """Raises and resolves interrupts (`pending_interrupts`) for the running turn's calls."""

    def _raise_interrupt(
        self,
        interrupt_id: str,
        call: DeferredToolCall,
        decision: ApprovalDecision,
        *,
        question: str | None,
        now: datetime,
        deadline: timedelta | None,
    ) -> None:
        self.pending_interrupts.append(
            AgentInterrupt(
                interrupt_id=interrupt_id,
                turn_id=self._require_turn(),
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                arguments=call.arguments,
                raised_at=now.isoformat(),
                deadline=(now + deadline).isoformat() if deadline is not None else None,
                kind=decision.kind,
                question=question,
                source=decision.source or "session",
            )
        )
        raised = self.pending_interrupts[-1]
        self.emit(
            AgentEventType.INTERRUPT_RAISED,
            {
                "interrupt_id": interrupt_id,
                "tool_call_id": call.tool_call_id,
                "tool_name": call.tool_name,
                "deadline": raised.deadline,
                "kind": raised.kind,
                "question": raised.question,
                "source": raised.source,
            },
        )

    def find_interrupt(self, interrupt_id: str) -> AgentInterrupt | None:
        return next((i for i in self.pending_interrupts if i.interrupt_id == interrupt_id), None)

    def is_current_turn_interrupt(self, interrupt_id: str) -> bool:
        """Whether ``interrupt_id`` names a call of the running turn (pending or not yet raised)."""
        turn_id = self.state.turn_id
        return self.turn_active and turn_id is not None and interrupt_id.startswith(f"{turn_id}:")

    def can_resolve(self, interrupt_id: str, now: datetime) -> bool:
        """Pending and not past its deadline."""
        interrupt = self.find_interrupt(interrupt_id)
        if interrupt is None:
            return False
        return interrupt.deadline is None or now < datetime.fromisoformat(interrupt.deadline)

    def resolve_interrupt(
        self,
        interrupt_id: str,
        *,
        approved: bool,
        rejection_message: str | None,
        now: datetime,
        answer: str | None = None,
    ) -> AgentToolCall:
        """Apply a person's answer. The message is dropped on approval.

        A question approved without an answer, or with one too long, is refused with
        `InvalidAnswerError` and stays pending; declining a question rejects its call.
        """
        if not self.can_resolve(interrupt_id, now):
            raise SessionStateError(f"interrupt {interrupt_id!r} is not pending")
        interrupt = self.find_interrupt(interrupt_id)
        assert interrupt is not None
        check_answer(interrupt.kind, approved=approved, answer=answer)
        self.pending_interrupts.remove(interrupt)
        message = None
        if not approved and rejection_message and rejection_message.strip():
            message = rejection_message.strip()
        self._emit_resolved(interrupt, approved=approved, rejection_message=message)
        if approved:
            return self.move_tool_call(interrupt.tool_call_id, AgentToolCallStatus.APPROVED, answer=answer)
        return self.move_tool_call(
            interrupt.tool_call_id, AgentToolCallStatus.REJECTED, rejection_message=message
        )

    def _emit_resolved(
        self,
        interrupt: AgentInterrupt,
        *,
        approved: bool,
        rejection_message: str | None,
        expired: bool = False,
    ) -> None:
        self.emit(
            AgentEventType.INTERRUPT_RESOLVED,
            {
                "interrupt_id": interrupt.interrupt_id,
                "approved": approved,
                "rejection_message": rejection_message,
                "expired": expired,
            },
            step=self.tool_step(interrupt.turn_id, interrupt.tool_call_id),
        )

    def expire_interrupt(self, interrupt_id: str) -> AgentToolCall | None:
        """The deadline passed with no answer: reject the call. None if it was already answered."""
        interrupt = self.find_interrupt(interrupt_id)
        if interrupt is None:
            return None
        self.pending_interrupts.remove(interrupt)
        self._emit_resolved(interrupt, approved=False, rejection_message=None, expired=True)
        return self.move_tool_call(
            interrupt.tool_call_id, AgentToolCallStatus.REJECTED, error=APPROVAL_EXPIRED
        )

    def reject_pending_interrupts(self, message: str) -> list[AgentToolCall]:
        """Answer every open approval with "no" (used when a turn is cancelled)."""
        rejected: list[AgentToolCall] = []
        for interrupt in list(self.pending_interrupts):
            self.pending_interrupts.remove(interrupt)
            self._emit_resolved(interrupt, approved=False, rejection_message=message)
            rejected.append(
                self.move_tool_call(
                    interrupt.tool_call_id, AgentToolCallStatus.REJECTED, rejection_message=message
                )
            )
        return rejected

    def abandon_unstarted_calls(self, message: str) -> list[AgentToolCall]:
        """Reject every call that never started, so a failed turn leaves only final records."""
        self.reject_pending_interrupts(message)
        unstarted = (AgentToolCallStatus.PENDING, AgentToolCallStatus.APPROVED)
        return [
            self.move_tool_call(r.tool_call_id, AgentToolCallStatus.REJECTED, rejection_message=message)
            for r in list(self.tool_calls.values())
            if r.status in unstarted
        ]
