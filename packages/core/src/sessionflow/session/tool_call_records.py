"""The running turn's tool call records: creating them and moving them through their statuses.

Every status change of a tool call goes through `move_tool_call`, which checks the move
(`AgentToolCall.moved_to`) and emits the started or finished event, so the event log and
the records never disagree.
"""

from __future__ import annotations

from typing import Any

from sessionflow.session.approvals import ApprovalDecision
from sessionflow.session.bodies import BodyRef
from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEventType
from sessionflow.session.model_fields import SessionFields
from sessionflow.session.tool_state import check_state_update, without_applied_updates
from sessionflow.session.tools import AgentToolCall, AgentToolCallStatus, DeferredToolCall
from sessionflow.session.verify import VerifyResult, settled_by_verify, verify_answer

__all__ = ["ToolCallRecords"]


class ToolCallRecords(SessionFields):
    """Records the running turn's tool calls (`tool_calls`)."""

    def tools_final(self) -> bool:
        return all(r.is_final for r in self.tool_calls.values())

    def model_step_tool_calls(self) -> list[AgentToolCall]:
        """The turn's tool call records for the next model step, without applied state updates."""
        return without_applied_updates(self.tool_calls.values(), self.state_updates_applied_through)

    def record(self, tool_call_id: str) -> AgentToolCall:
        try:
            return self.tool_calls[tool_call_id]
        except KeyError:
            raise SessionStateError(f"no tool call {tool_call_id!r} in the running turn") from None

    def _add_deferred(
        self,
        call: DeferredToolCall,
        decision: ApprovalDecision,
        *,
        order: int,
        verify_basis: str | None,
        interrupt_id: str | None,
        question: str | None,
    ) -> AgentToolCall:
        """Record one call the model proposed (awaiting approval when `interrupt_id` is set)."""
        needs_approval = interrupt_id is not None
        record = AgentToolCall(
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            arguments=call.arguments,
            policy=call.policy,
            deferral_order=order,
            status=AgentToolCallStatus.AWAITING_APPROVAL if needs_approval else AgentToolCallStatus.PENDING,
            interrupt_id=interrupt_id,
            approval_source=decision.source if needs_approval else None,
            framework_approval=call.framework_approval,
            question=question,
            verifiable=call.verifiable,
            verify_basis=verify_basis,
            skip_run_state=call.skip_run_state,
        )
        self.tool_calls[call.tool_call_id] = record
        deferred: dict[str, Any] = {
            "tool_call_id": call.tool_call_id,
            "tool_name": call.tool_name,
            "effect": call.policy.effect.value,
            "requires_approval": needs_approval,
        }
        # Said only when there is something to say, so a call no framework rule touched
        # keeps the event it always had.
        if needs_approval:
            deferred["approval_source"] = record.approval_source
            deferred["kind"] = decision.kind
        if call.framework_approval is not None:
            deferred["framework_approval"] = call.framework_approval
        self.emit(AgentEventType.TOOL_CALL_DEFERRED, deferred)
        return record

    def move_tool_call(self, tool_call_id: str, status: AgentToolCallStatus, **changes: Any) -> AgentToolCall:
        updated = self.record(tool_call_id).moved_to(status, **changes)
        check_state_update(updated)
        self.tool_calls[tool_call_id] = updated
        step = self.tool_step(self._require_turn(), tool_call_id)
        names = {"tool_call_id": tool_call_id, "tool_name": updated.tool_name}
        if status is AgentToolCallStatus.RUNNING:
            self.emit(AgentEventType.TOOL_CALL_STARTED, names, step=step)
        elif updated.is_final:
            finished = {**names, "status": status.value, "error": updated.error}
            self.emit(AgentEventType.TOOL_CALL_FINISHED, finished, step=step)
        return updated

    def settle_by_verify(
        self,
        tool_call_id: str,
        result: VerifyResult | None,
        *,
        write_error: str,
        step: str,
        output_ref: BodyRef | None = None,
    ) -> AgentToolCall:
        """Record what the tool's verify said about a write whose step died (see `session.verify`).

        `output_ref` is the stored whole of a long `TookEffect` output (its preview is the output).
        """
        status, changes = settled_by_verify(result, write_error)
        if status is AgentToolCallStatus.SUCCEEDED and output_ref is not None:
            changes["output_ref"] = output_ref
        record = self.record(tool_call_id)
        self.emit(
            AgentEventType.TOOL_CALL_VERIFIED,
            {
                "tool_call_id": tool_call_id,
                "tool_name": record.tool_name,
                "result": verify_answer(result),
                "status": status.value,
            },
            step=step,
        )
        return self.move_tool_call(tool_call_id, status, **changes)
