"""The tool steps (``sessionflow.CallTool``, ``sessionflow.CallSingleAttemptTool``): one deferred tool call.

Both run the runner's `execute_deferred_tool_call` the same way; the workflow picks the
name by the call's effect, which sets the retry policy. A large output or state update
goes to the payload store and the workflow records its reference.
"""

from __future__ import annotations

from temporalio import activity

from sessionflow.kit._approved_arguments import check_run_arguments, rewritten_arguments, watch_rewrites
from sessionflow.kit._current_invocation import tool_invocation_scope
from sessionflow.kit._media_sink import MEDIA_SINK, MediaSink
from sessionflow.kit._step_journal import step_journal_scope
from sessionflow.session.approval_digest import run_arguments_of
from sessionflow.session.bodies import BodyRef, cap_text, preview_text, utf8_size
from sessionflow.session.runner import DeferredToolExecution
from sessionflow.session.tools import ToolExecutionError, ToolExecutionResult
from sessionflow.temporal._payloads import CALL_SINGLE_ATTEMPT_TOOL, CALL_TOOL, ToolCallInput, ToolCallOutput
from sessionflow.temporal.activities._step_context import (
    StepActivities,
    store_scope,
    with_heartbeats,
)
from sessionflow.temporal.activities._step_journal import HeartbeatJournal
from sessionflow.temporal.activities._step_telemetry import observe_tool_step
from sessionflow.temporal.storage._store_errors import PayloadStoreError

__all__ = ["ToolStepActivities"]

_FALLBACK_OUTPUT_BYTES = 64 * 1024
"""Bytes of a single-attempt tool's output kept inline when the payload store fails."""


class ToolStepActivities(StepActivities):
    """CallTool and CallSingleAttemptTool for one flow on one worker."""

    @activity.defn(name=CALL_TOOL)
    async def call_tool(self, request: ToolCallInput) -> ToolCallOutput:
        return await self._run_tool(request)

    @activity.defn(name=CALL_SINGLE_ATTEMPT_TOOL)
    async def call_single_attempt_tool(self, request: ToolCallInput) -> ToolCallOutput:
        return await self._run_tool(request)

    async def _run_tool(self, request: ToolCallInput) -> ToolCallOutput:
        with observe_tool_step(request.session_id, request.turn_id, request.tool_call) as step:
            with self._failures_reported():
                output = await self._run_tool_once(request)
            step.tool_done(output)
            return output

    async def _run_tool_once(self, request: ToolCallInput) -> ToolCallOutput:
        info = activity.info()
        record = request.tool_call
        events = self._steps.writer(request.session_id, request.turn_id)
        events.write_tool_call_started(record.tool_call_id, record.tool_name)
        # No heartbeat before the tool acts (the reference engine's, which narrows a window in
        # which its queue redelivers a step to a second worker): Temporal gives an attempt to
        # one worker only, and the heartbeat timeout runs from the attempt's start whether or
        # not it beat. That heartbeat cost a tool step an RPC its completion waited for.
        # What the tool does inside itself (a nested agent run) is journaled across attempts:
        # the journal's index rides on every heartbeat of the step.
        journal = HeartbeatJournal(
            client=self._steps.client,
            task_token=info.task_token,
            bodies=self._steps.bodies,
            scope=store_scope() if self._steps.bodies is not None else None,
            prior=info.heartbeat_details,
        )
        execution = DeferredToolExecution(
            flow_id=request.session_id,
            turn_id=request.turn_id,
            tool_call=record,
            attempt=info.attempt,
            events=events,
            heartbeat=journal.heartbeat,
            session_settings=request.session_settings,
            run_state=await self._tool_run_state(request, journal),
        )
        sink_token = MEDIA_SINK.set(self._media_sink())
        try:
            # The one place the current invocation is set: every adapter's tools read it.
            with (
                tool_invocation_scope(execution.invocation),
                step_journal_scope(journal),
                watch_rewrites() as rewrites,
            ):
                # What the session hands the runner is what was approved; an adapter checks
                # again where its framework may rewrite the call (`check_run_arguments`).
                try:
                    check_run_arguments(run_arguments_of(record))
                    result: ToolExecutionResult = await with_heartbeats(
                        request.heartbeat_interval,
                        self._steps.flow.runner.execute_deferred_tool_call(execution),
                        journal.heartbeat,
                    )
                except Exception:
                    if rewrites:
                        return ToolCallOutput(rebound_arguments=rewritten_arguments(rewrites))
                    raise
                if rewrites:
                    # The framework turned the refusal into a result; the tool did not run.
                    return ToolCallOutput(rebound_arguments=rewritten_arguments(rewrites))
        except ToolExecutionError as error:
            # The failure's own account is small framework text (a retry prompt): kept inline.
            return ToolCallOutput(error=error.message, state_update=error.state_update)
        finally:
            MEDIA_SINK.reset(sink_token)
            events.close()
        bodies = self._steps.bodies
        if bodies is not None:
            try:
                ref = await with_heartbeats(
                    request.heartbeat_interval,
                    bodies.store_text(result.output, store_scope()),
                    journal.heartbeat,
                )
            except PayloadStoreError as error:
                if record.policy.effect.is_retryable:
                    raise  # the step runs again once the store is back
                # A single-attempt tool has run: failing now would record outcome_unknown and
                # lose a known success. Keep a head small enough for the history instead.
                if (
                    result.state_update is not None
                    and utf8_size(result.state_update) > _FALLBACK_OUTPUT_BYTES
                ):
                    raise  # a cut update is no update: the call ends outcome_unknown instead
                return ToolCallOutput(
                    output=cap_text(result.output, _FALLBACK_OUTPUT_BYTES, what=f"output ({error})"),
                    state_update=result.state_update,
                )
            update, update_ref = await self._stored_state_update(request, result, journal)
            if ref is not None:
                return ToolCallOutput(
                    output=preview_text(result.output),
                    output_ref=ref,
                    state_update=update,
                    state_update_ref=update_ref,
                )
            return ToolCallOutput(output=result.output, state_update=update, state_update_ref=update_ref)
        return ToolCallOutput(output=result.output, state_update=result.state_update)

    async def _tool_run_state(self, request: ToolCallInput, journal: HeartbeatJournal) -> str | None:
        """The run state of the model step that deferred the call, loaded when stored."""
        if request.run_state_ref is None:
            return request.run_state
        return await with_heartbeats(
            request.heartbeat_interval,
            self._steps.require_bodies().load_text(request.run_state_ref),
            journal.heartbeat,
        )

    async def _stored_state_update(
        self, request: ToolCallInput, result: ToolExecutionResult, journal: HeartbeatJournal
    ) -> tuple[str | None, BodyRef | None]:
        """The update as the workflow records it: inline when small, else (None, its reference).

        Unlike an output, a store failure is not softened: the update is framework state,
        and a head of it is no update at all. The step fails and runs again (a read or an
        idempotent write) or ends outcome_unknown (a non-idempotent write).
        """
        if result.state_update is None:
            return None, None
        assert self._steps.bodies is not None
        ref = await with_heartbeats(
            request.heartbeat_interval,
            self._steps.bodies.store_text(result.state_update, store_scope()),
            journal.heartbeat,
        )
        return (None, ref) if ref is not None else (result.state_update, None)

    def _media_sink(self) -> MediaSink | None:
        """Media a tool saves (MCP images, audio, blobs) also go to the session's payload store."""
        bodies = self._steps.bodies
        if bodies is None:
            return None
        scope = store_scope()

        async def sink(data: bytes, mime_type: str) -> None:
            await bodies.put(data, scope)

        return sink
