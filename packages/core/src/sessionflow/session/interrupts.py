"""Interrupts: tool calls waiting for a person (an approval or a question) and their answers.

A call that needs a person is recorded awaiting approval and raises an interrupt, named
`<turn_id>:<tool_call_id>`. The interrupt ends when someone answers it, its deadline
passes, or the turn is cancelled; each way moves the call on and emits the resolution.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sessionflow.session.approval_digest import approval_digest
from sessionflow.session.approvals import ApprovalDecision, StaleApprovalError, check_answer
from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEventType
from sessionflow.session.state import AgentInterrupt
from sessionflow.session.tool_call_records import ToolCallRecords
from sessionflow.session.tools import AgentToolCall, AgentToolCallStatus, ApprovalRecord, DeferredToolCall

__all__ = ["APPROVAL_EXPIRED", "MAX_REBINDS", "Interrupts"]

APPROVAL_EXPIRED = "The approval deadline passed before anyone answered."

MAX_REBINDS = 3
"""Rewrites after an approval one call may have. A framework that rewrites the approved
arguments differently on every run would otherwise ask forever; past this the call fails."""


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
        previous = call.previous_arguments
        self._append_interrupt(
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
                digest=approval_digest(call.tool_name, call.arguments, call.policy.effect),
                previous_arguments=previous if previous is not None and previous != call.arguments else None,
                effect=call.policy.effect.value,
                reason=decision.reason,
                preview=call.preview,
            )
        )

    def _append_interrupt(self, raised: AgentInterrupt) -> None:
        self.pending_interrupts.append(raised)
        self.emit(
            AgentEventType.INTERRUPT_RAISED,
            {
                "interrupt_id": raised.interrupt_id,
                "tool_call_id": raised.tool_call_id,
                "tool_name": raised.tool_name,
                "deadline": raised.deadline,
                "kind": raised.kind,
                "question": raised.question,
                "source": raised.source,
                "digest": raised.digest,
                "rewritten": raised.previous_arguments is not None,
            },
        )

    def rebind_approval(
        self, tool_call_id: str, arguments: str, *, now: datetime, deadline: timedelta | None
    ) -> AgentToolCall:
        """The framework rewrote an approved call's arguments in its tool step: ask again.

        The rewritten call did not run. It waits for a new approval of ``arguments``, shown
        as a diff against what the person approved, under a new interrupt
        (``<turn>:<call>#<n>``). The call fails instead after `MAX_REBINDS` rewrites.
        """
        record = self.record(tool_call_id)
        shown = record.rebound_arguments if record.rebound_arguments is not None else record.arguments
        rebinds = record.rebinds + 1
        if rebinds > MAX_REBINDS:
            return self.move_tool_call(
                tool_call_id,
                AgentToolCallStatus.FAILED,
                error=(
                    f"the framework rewrote the approved arguments of {record.tool_name!r} "
                    f"{MAX_REBINDS} times; the call was not run"
                ),
            )
        interrupt_id = f"{self._require_turn()}:{tool_call_id}#{rebinds + 1}"
        record = self.move_tool_call(
            tool_call_id,
            AgentToolCallStatus.AWAITING_APPROVAL,
            interrupt_id=interrupt_id,
            rebound_arguments=arguments,
            rebinds=rebinds,
            approval_source="framework" if record.approval_source is None else record.approval_source,
        )
        self._append_interrupt(
            AgentInterrupt(
                interrupt_id=interrupt_id,
                turn_id=self._require_turn(),
                tool_call_id=tool_call_id,
                tool_name=record.tool_name,
                arguments=arguments,
                raised_at=now.isoformat(),
                deadline=(now + deadline).isoformat() if deadline is not None else None,
                kind="approval",
                source=record.approval_source or "framework",
                digest=approval_digest(record.tool_name, arguments, record.policy.effect),
                previous_arguments=shown,
                effect=record.policy.effect.value,
                reason="the tool step rewrote the approved arguments: they need a new approval",
            )
        )
        return record

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
        digest: str | None = None,
        answered_by: str | None = None,
    ) -> AgentToolCall:
        """Apply a person's answer. The message is dropped on approval.

        A question approved without an answer, or with one too long, is refused with
        `InvalidAnswerError` and stays pending; declining a question rejects its call. An
        approval that names a ``digest`` other than the interrupt's (the person saw other
        arguments) is refused with `StaleApprovalError` and stays pending too. The answer
        is recorded on the call (`AgentToolCall.approval`) with who gave it and when.
        """
        if not self.can_resolve(interrupt_id, now):
            raise SessionStateError(f"interrupt {interrupt_id!r} is not pending")
        interrupt = self.find_interrupt(interrupt_id)
        assert interrupt is not None
        check_answer(interrupt.kind, approved=approved, answer=answer)
        check_digest(interrupt, digest)
        self.pending_interrupts.remove(interrupt)
        message = None
        if not approved and rejection_message and rejection_message.strip():
            message = rejection_message.strip()
        record = ApprovalRecord(
            interrupt_id=interrupt_id,
            approved=approved,
            digest=interrupt.digest,
            answered_by=answered_by,
            answered_at=now.isoformat(),
            reason=message,
        )
        self._emit_resolved(interrupt, record)
        if approved:
            if answer is None and self.record(interrupt.tool_call_id).rebinds:
                # Confirming a rewrite keeps the answer the first approval gave (an edit
                # decision the framework resumes with).
                answer = self.record(interrupt.tool_call_id).answer
            return self.move_tool_call(
                interrupt.tool_call_id, AgentToolCallStatus.APPROVED, answer=answer, approval=record
            )
        return self.move_tool_call(
            interrupt.tool_call_id, AgentToolCallStatus.REJECTED, rejection_message=message, approval=record
        )

    def _emit_resolved(self, interrupt: AgentInterrupt, record: ApprovalRecord) -> None:
        self.emit(
            AgentEventType.INTERRUPT_RESOLVED,
            {
                "interrupt_id": interrupt.interrupt_id,
                "approved": record.approved,
                "rejection_message": record.reason,
                "expired": record.expired,
                "digest": record.digest,
                "answered_by": record.answered_by,
                "answered_at": record.answered_at,
            },
            step=self.tool_step(interrupt.turn_id, interrupt.tool_call_id),
        )

    def expire_interrupt(self, interrupt_id: str, now: datetime | None = None) -> AgentToolCall | None:
        """The deadline passed with no answer: reject the call. None if it was already answered."""
        interrupt = self.find_interrupt(interrupt_id)
        if interrupt is None:
            return None
        self.pending_interrupts.remove(interrupt)
        record = ApprovalRecord(
            interrupt_id=interrupt_id,
            approved=False,
            digest=interrupt.digest,
            answered_by=None,
            answered_at=(now.isoformat() if now is not None else interrupt.deadline or interrupt.raised_at),
            expired=True,
        )
        self._emit_resolved(interrupt, record)
        return self.move_tool_call(
            interrupt.tool_call_id, AgentToolCallStatus.REJECTED, error=APPROVAL_EXPIRED, approval=record
        )

    def reject_pending_interrupts(self, message: str, now: datetime | None = None) -> list[AgentToolCall]:
        """Answer every open approval with "no" (used when a turn is cancelled); nobody answered."""
        rejected: list[AgentToolCall] = []
        for interrupt in list(self.pending_interrupts):
            self.pending_interrupts.remove(interrupt)
            record = ApprovalRecord(
                interrupt_id=interrupt.interrupt_id,
                approved=False,
                digest=interrupt.digest,
                answered_by=None,
                answered_at=now.isoformat() if now is not None else interrupt.raised_at,
                reason=message,
            )
            self._emit_resolved(interrupt, record)
            rejected.append(
                # Nobody said no: the session did (a cancel, a stop), so the call records why
                # it did not run, and nothing says a person rejected it.
                self.move_tool_call(
                    interrupt.tool_call_id, AgentToolCallStatus.REJECTED, error=message, approval=record
                )
            )
        return rejected

    def abandon_unstarted_calls(self, message: str, now: datetime | None = None) -> list[AgentToolCall]:
        """Reject every call that never started, so a failed turn leaves only final records."""
        self.reject_pending_interrupts(message, now)
        unstarted = (AgentToolCallStatus.PENDING, AgentToolCallStatus.APPROVED)
        return [
            self.move_tool_call(r.tool_call_id, AgentToolCallStatus.REJECTED, error=message)
            for r in list(self.tool_calls.values())
            if r.status in unstarted
        ]


def check_digest(interrupt: AgentInterrupt, digest: str | None) -> None:
    """Refuse an answer given for other arguments than the interrupt shows.

    Raises:
        StaleApprovalError: ``digest`` is given and is not the interrupt's.
    """
    if digest is None or interrupt.digest is None or digest == interrupt.digest:
        return
    raise StaleApprovalError(
        f"interrupt {interrupt.interrupt_id!r} shows other arguments than the ones answered "
        f"(digest {interrupt.digest}, answered {digest}); read the interrupt again and answer it"
    )
