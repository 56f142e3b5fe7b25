"""The tool calls of one model step: run side by side, each after its approval, a dead write verified."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Sequence
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.memory import MEMORY_TOOL_NAMES
    from sessionflow.session.model import SessionModel
    from sessionflow.session.tools import AgentToolCall, AgentToolCallStatus, ToolEffect
    from sessionflow.session.verify import EffectUnknown
    from sessionflow.temporal._metrics import (
        APPROVALS_REQUESTED,
        APPROVALS_RESOLVED,
        OUTCOME_UNKNOWN,
        TOOL_CALLS,
        workflow_count,
    )
    from sessionflow.temporal._payloads import (
        CALL_SINGLE_ATTEMPT_TOOL,
        CALL_TOOL,
        VERIFY_TOOL,
        ToolCallInput,
        ToolCallOutput,
        VerifyToolOutput,
    )
    from sessionflow.temporal._summaries import tool_summary
    from sessionflow.temporal.workflow._cancel import TURN_CANCELLED
    from sessionflow.temporal.workflow._context import SessionContext
    from sessionflow.temporal.workflow._continue_as_new import Continuation
    from sessionflow.temporal.workflow._failures import describe_failure
    from sessionflow.temporal.workflow._visibility import Visibility

MOVE_WHILE_WAITING_PATCH = "sessionflow-move-while-waiting"
"""Marks runs whose approval waits may continue as new when the history asks (issue 41)."""

VERIFY_PATCH = "sessionflow-verify"
"""Marks histories whose dead writes may be followed by a verify step (issue 20, verified outcomes)."""


class ToolCalls:
    """Runs the calls a model step requested and records how each ended in the model."""

    def __init__(self, session: SessionContext, visibility: Visibility, continuation: Continuation) -> None:
        self._session = session
        self._visibility = visibility
        self._continuation = continuation

    async def run(self, records: Sequence[AgentToolCall]) -> None:
        """Run every call not already final, side by side."""
        await asyncio.gather(*(self._counted_tool_call(r) for r in records if not r.is_final))

    async def _counted_tool_call(self, record: AgentToolCall) -> None:
        """Run one call, then count how it ended (replay-safe metrics).

        A call whose framework rewrote its approved arguments in the step did not run; it
        waits for a new approval of the rewrite, then runs again (`rebind_approval`).
        """
        while await self._run_tool_call(record):
            record = self._session.model.record(record.tool_call_id)
            if record.is_final:
                break
        model = self._session.model
        model.note_tool_finished(record.tool_call_id, workflow.now().isoformat())
        final = model.record(record.tool_call_id)
        effect = final.policy.effect.value
        workflow_count(TOOL_CALLS, {"tool_effect": effect, "outcome": final.status.value})
        if final.status is AgentToolCallStatus.OUTCOME_UNKNOWN:
            workflow_count(OUTCOME_UNKNOWN, {"tool_effect": effect})

    async def _run_tool_call(self, record: AgentToolCall) -> bool:
        """Run one call to its end; True when it must ask again (its arguments were rewritten)."""
        session = self._session
        model = session.model
        cancel = session.cancel
        tool_call_id = record.tool_call_id
        if record.status is AgentToolCallStatus.AWAITING_APPROVAL:
            workflow_count(APPROVALS_REQUESTED)
            self._visibility.show_state()
            try:
                await self._await_approval(record)
            finally:
                workflow_count(APPROVALS_RESOLVED)
            self._visibility.show_state()
            record = model.record(tool_call_id)
            if record.status is AgentToolCallStatus.REJECTED:
                return False
        if cancel.requested:
            model.move_tool_call(tool_call_id, AgentToolCallStatus.REJECTED, error=TURN_CANCELLED)
            return False
        if model.memory is not None and record.tool_name in MEMORY_TOOL_NAMES:
            # Memory lives in the session's own state, so the session runs these itself.
            model.run_memory_tool(record, workflow.now())
            return False
        record = model.move_tool_call(tool_call_id, AgentToolCallStatus.RUNNING)
        model.note_tool_started(tool_call_id, workflow.now().isoformat())
        effect = record.policy.effect
        config = session.settings
        attempts = config.tool_max_attempts if effect.is_retryable else 1
        turn_id = model.state.turn_id
        assert turn_id is not None
        tool_input = ToolCallInput(
            session_id=workflow.info().workflow_id,
            turn_id=turn_id,
            tool_call=record,
            heartbeat_interval=config.heartbeat_interval,
            session_settings=model.turn_settings,
            # The state of the step that deferred the call: by reference when stored; none
            # for a call whose runner reads none (a worker before the field passes it anyway).
            run_state=None if record.skip_run_state or model.run_state_ref is not None else model.run_state,
            run_state_ref=None if record.skip_run_state else model.run_state_ref,
        )
        retry_policy = RetryPolicy(
            maximum_attempts=attempts, initial_interval=timedelta(seconds=config.retry_initial_interval)
        )
        local_timeout = record.policy.local_timeout
        if local_timeout is not None and effect is ToolEffect.READ:
            # The policy arrived in the model step's result, so a replay takes the same branch;
            # histories from before local steps have no local_timeout and stay on the other.
            step = asyncio.ensure_future(
                workflow.execute_local_activity(
                    CALL_TOOL,
                    tool_input,
                    result_type=ToolCallOutput,
                    activity_id=self._step_id(turn_id, record),
                    summary=tool_summary(record.tool_name, record.arguments),
                    start_to_close_timeout=timedelta(seconds=local_timeout),
                    schedule_to_close_timeout=timedelta(seconds=config.tool_schedule_to_close),
                    retry_policy=retry_policy,
                )
            )
        else:
            step = asyncio.ensure_future(
                workflow.execute_activity(
                    CALL_TOOL if effect.is_retryable else CALL_SINGLE_ATTEMPT_TOOL,
                    tool_input,
                    result_type=ToolCallOutput,
                    activity_id=self._step_id(turn_id, record),
                    summary=tool_summary(record.tool_name, record.arguments),
                    start_to_close_timeout=timedelta(seconds=config.tool_start_to_close),
                    schedule_to_close_timeout=timedelta(seconds=config.tool_schedule_to_close),
                    heartbeat_timeout=timedelta(seconds=config.tool_heartbeat_timeout),
                    retry_policy=retry_policy,
                )
            )
        try:
            # Only reads are cancelled with the turn: a write may already have taken effect.
            output = await (cancel.step(step) if effect is ToolEffect.READ else step)
        except asyncio.CancelledError:
            if not cancel.requested:
                raise
            model.move_tool_call(tool_call_id, AgentToolCallStatus.FAILED, error=TURN_CANCELLED)
            return False
        except ActivityError as error:
            reason = describe_failure(error)
            if effect is ToolEffect.READ:
                if cancel.caused(error):
                    reason = TURN_CANCELLED
                model.move_tool_call(tool_call_id, AgentToolCallStatus.FAILED, error=reason)
            elif record.verifiable and workflow.patched(VERIFY_PATCH):
                # Histories before verified outcomes ended the call here; the marker keeps
                # their replay on that path.
                await self._verify_write(tool_input, reason)
            else:
                model.move_tool_call(tool_call_id, AgentToolCallStatus.OUTCOME_UNKNOWN, error=reason)
            return False
        if output.rebound_arguments is not None:
            # Only a tool step of this version reports a rewrite, so older histories never
            # reach this branch.
            interrupt_seconds = session.settings.interrupt_deadline
            model.rebind_approval(
                tool_call_id,
                output.rebound_arguments,
                now=workflow.now(),
                deadline=timedelta(seconds=interrupt_seconds) if interrupt_seconds is not None else None,
            )
            return True
        if output.error is not None:
            # Outputs recorded before failures carried an update have none: the same record.
            model.move_tool_call(
                tool_call_id, AgentToolCallStatus.FAILED, error=output.error, state_update=output.state_update
            )
        else:
            model.move_tool_call(
                tool_call_id,
                AgentToolCallStatus.SUCCEEDED,
                output=output.output or "",
                output_ref=output.output_ref,
                state_update=output.state_update,
                state_update_ref=output.state_update_ref,
            )
        return False

    @staticmethod
    def _step_id(turn_id: str, record: AgentToolCall) -> str:
        """The step's activity ID; a run after a rewrite's approval gets its own (``#<n>``)."""
        step = SessionModel.tool_step(turn_id, record.tool_call_id)
        return f"{step}#{record.rebinds + 1}" if record.rebinds else step

    async def _verify_write(self, tool_input: ToolCallInput, write_error: str) -> None:
        """The write's step died: ask the tool's verify, a read step, before recording its outcome."""
        session = self._session
        config = session.settings
        model = session.model
        tool_call_id = tool_input.tool_call.tool_call_id
        step_id = SessionModel.verify_step(tool_input.turn_id, tool_call_id)
        step = asyncio.ensure_future(
            workflow.execute_activity(
                VERIFY_TOOL,
                tool_input,
                result_type=VerifyToolOutput,
                activity_id=step_id,
                summary=tool_summary(
                    f"verify {tool_input.tool_call.tool_name}", tool_input.tool_call.arguments
                ),
                start_to_close_timeout=timedelta(seconds=config.tool_start_to_close),
                schedule_to_close_timeout=timedelta(seconds=config.tool_schedule_to_close),
                heartbeat_timeout=timedelta(seconds=config.tool_heartbeat_timeout),
                retry_policy=RetryPolicy(
                    maximum_attempts=config.tool_max_attempts,
                    initial_interval=timedelta(seconds=config.retry_initial_interval),
                ),
            )
        )
        try:
            # A read, so it is cancelled with the turn; the write's outcome then stays unknown.
            found = await session.cancel.step(step)
        except asyncio.CancelledError:
            if not session.cancel.requested:
                raise
            model.settle_by_verify(
                tool_call_id, EffectUnknown(reason=TURN_CANCELLED), write_error=write_error, step=step_id
            )
            return
        except ActivityError as error:
            reason = f"the verify step failed: {describe_failure(error)}"
            if session.cancel.caused(error):
                reason = TURN_CANCELLED
            model.settle_by_verify(
                tool_call_id, EffectUnknown(reason=reason), write_error=write_error, step=step_id
            )
            return
        model.settle_by_verify(
            tool_call_id, found.result(), write_error=write_error, step=step_id, output_ref=found.output_ref
        )

    async def _await_approval(self, record: AgentToolCall) -> None:
        model = self._session.model
        tool_call_id = record.tool_call_id
        continuation = self._continuation
        # A run recorded before moves while waiting replays without them (no marker there).
        movable = workflow.patched(MOVE_WHILE_WAITING_PATCH)

        def answered() -> bool:
            return model.record(tool_call_id).status is not AgentToolCallStatus.AWAITING_APPROVAL

        def wake() -> bool:
            return answered() or (movable and continuation.move_wanted_while_waiting())

        interrupt = model.find_interrupt(record.interrupt_id or "")
        if interrupt is None:
            return
        deadline = datetime.fromisoformat(interrupt.deadline) if interrupt.deadline is not None else None
        while not answered():
            if movable and continuation.move_wanted_while_waiting():
                # Every open call of the turn waits for a person, and nothing runs: the
                # run moves on, carrying the approvals and their deadlines. It returns
                # only when a cancel came in meanwhile (which answers the approvals "no").
                await continuation.move_while_waiting()
                continue
            if deadline is None:
                await workflow.wait_condition(wake)
                continue
            remaining = (deadline - workflow.now()).total_seconds()
            if remaining <= 0:
                model.expire_interrupt(interrupt.interrupt_id, workflow.now())
                return
            try:
                # Whole seconds, so a timer never fires a hair before the deadline it serves.
                await workflow.wait_condition(wake, timeout=float(int(remaining) + (remaining % 1 > 0)))
            except builtins.TimeoutError:
                continue
