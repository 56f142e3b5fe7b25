"""The model step (``sessionflow.RunModel``): one call of the runner's `run_model_step`.

`ModelStepActivities.run_model` reads the session's messages (`_message_cache`) and the
bodies they refer to, waits for a slot of the worker's model call limits, calls the
runner, and returns its outcome as the workflow records it: large bodies, run states and
carries stored by reference, tool calls checked against the catalog and call policy.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from sessionflow.session.approval_preview import bounded_preview
from sessionflow.session.approvals import as_session_approval, decide_approval
from sessionflow.session.bodies import UNINDEXED_MESSAGE_BYTES, BodyRef, cap_text, inline_size
from sessionflow.session.errors import SessionStateError
from sessionflow.session.framework_state import bounded_framework_state
from sessionflow.session.messages import AgentMessage, MessageRole
from sessionflow.session.options import ApprovalPreviewer
from sessionflow.session.outcomes import ContinueRequested, ToolCallsRequested, TurnCompleted
from sessionflow.session.proposals import check_proposal
from sessionflow.session.runner import AgentTurnContext
from sessionflow.session.tools import AgentToolCall, DeferredToolCall, validate_tool_call_ids
from sessionflow.session.turn_records import STEP_TEXT_CHARS, cut
from sessionflow.temporal._payloads import RUN_MODEL, MessageIndexChunk, RunModelInput, RunModelResult
from sessionflow.temporal._summaries import model_name_of
from sessionflow.temporal.activities._carry import stored_carry
from sessionflow.temporal.activities._message_cache import MessageCache
from sessionflow.temporal.activities._model_call_gate import ModelCallGate
from sessionflow.temporal.activities._provider_retry import retry_when_provider_says
from sessionflow.temporal.activities._step_context import (
    StepActivities,
    StepContext,
    StepEventWriter,
    store_scope,
    with_heartbeats,
)
from sessionflow.temporal.activities._step_telemetry import observe_model_step
from sessionflow.temporal.storage._media import local_copy
from sessionflow.temporal.worker._model_call_limits import model_call_keys

__all__ = ["ModelStepActivities"]

_log = logging.getLogger(__name__)


class ModelStepActivities(StepActivities):
    """RunModel for one flow on one worker."""

    def __init__(self, steps: StepContext, model_calls: ModelCallGate | None = None) -> None:
        super().__init__(steps)
        self._flow = steps.flow
        self._model_calls = model_calls or ModelCallGate()  # the worker's, shared by its flows
        self._messages = MessageCache(steps)

    @activity.defn(name=RUN_MODEL)
    async def run_model(self, request: RunModelInput) -> RunModelResult:
        model = model_name_of(request.session_settings, self._flow.model_name)
        with observe_model_step(request.session_id, request.turn_id, model) as step:
            with self._failures_reported():
                events = self._steps.writer(request.session_id, request.turn_id)
                try:
                    result = await self._run_model(request, events)
                finally:
                    events.close()  # closing twice is harmless
                # The text this attempt streamed is the step's text: the turn's record keeps it.
                text = events.text or _answer_text(result)
                result = replace(result, step_text=cut(text, STEP_TEXT_CHARS)[0])
            step.model_done(result)
            return result

    async def _run_model(self, request: RunModelInput, events: StepEventWriter) -> RunModelResult:
        info = activity.info()
        entries = await self._messages.messages(request)
        messages = await self._resolved(entries)
        for image in request.media:
            await local_copy(self._steps.require_bodies(), image)  # the runner reads it by path
        run_state = request.framework_run_state
        if request.framework_run_state_ref is not None:
            run_state = await self._steps.require_bodies().load_text(request.framework_run_state_ref)
        carried = request.carried_state
        if request.carried_state_ref is not None:
            carried = await self._steps.require_bodies().load_text(request.carried_state_ref)
        context = AgentTurnContext(
            flow_id=request.session_id,
            turn_id=request.turn_id,
            attempt=info.attempt,
            messages=messages,
            framework_run_state=run_state,
            tool_calls={r.tool_call_id: await self._model_view(r) for r in request.tool_calls},
            policy_resolver=self._flow.options.resolve_tool_policy,
            tool_policies=self._flow.options.tool_policies,
            events=events,
            heartbeat=activity.heartbeat,
            session_settings=request.session_settings,
            carried_state=carried,
            steered_messages=tuple(
                [await self._steps.require_bodies().load_message(m) if m.body else m for m in request.steered]
            ),
        )
        try:
            async with self._model_call_slot(request):
                with retry_when_provider_says():
                    outcome = await with_heartbeats(
                        request.heartbeat_interval, self._flow.runner.run_model_step(context)
                    )
        finally:
            events.close()
        if isinstance(outcome, TurnCompleted):
            outcome = bounded_framework_state(outcome)  # bounded before it enters the history
            # Storing can take a while against a slow store: the attempt keeps heartbeating.
            outcome = await with_heartbeats(
                request.heartbeat_interval, stored_carry(self._steps.bodies, outcome, store_scope())
            )
            return await with_heartbeats(
                request.heartbeat_interval, self._completed(request, entries, outcome)
            )
        if isinstance(outcome, ContinueRequested):
            if not request.accepts_continue:
                raise ApplicationError(
                    "run_model_step returned ContinueRequested, and the session workflow that "
                    "scheduled this step predates continue steps; let its turn end before upgrading",
                    type="InvalidOutcomeError",
                    non_retryable=True,
                )
            state, state_ref = await self._stored_run_state(
                request, outcome.framework_run_state, "ContinueRequested"
            )
            return RunModelResult(
                continued=replace(outcome, framework_run_state=state, run_state_ref=state_ref)
            )
        if isinstance(outcome, ToolCallsRequested):  # pyright: ignore[reportUnnecessaryIsInstance]
            validate_tool_call_ids(outcome.tool_calls, context.tool_calls)
            state, state_ref = await self._stored_run_state(
                request, outcome.framework_run_state, "ToolCallsRequested"
            )
            outcome = replace(outcome, framework_run_state=state, run_state_ref=state_ref)
            catalog = self._flow.runner.tool_catalog(request.session_settings)
            if catalog is not None:
                outcome = replace(
                    outcome,
                    tool_calls=[
                        replace(c, proposal_error=check_proposal(c, catalog)) for c in outcome.tool_calls
                    ],
                )
            call_policy = self._flow.options.call_policy
            if call_policy is not None:
                settings = request.session_settings
                outcome = replace(
                    outcome,
                    tool_calls=[replace(c, policy=call_policy(c, settings)) for c in outcome.tool_calls],
                )
            previewer = self._flow.options.approval_preview
            if previewer is not None:
                settings = request.session_settings
                outcome = replace(
                    outcome, tool_calls=[_previewed(c, previewer, settings) for c in outcome.tool_calls]
                )
            if not request.accepts_asks:
                outcome = replace(outcome, tool_calls=[as_session_approval(c) for c in outcome.tool_calls])
            return RunModelResult(requested=outcome)
        raise ApplicationError(
            f"run_model_step returned {type(outcome).__name__}, "
            "expected TurnCompleted, ToolCallsRequested or ContinueRequested",
            type="InvalidOutcomeError",
            non_retryable=True,
        )

    def _model_call_slot(self, request: RunModelInput) -> AbstractAsyncContextManager[None]:
        """A slot of every model call limit of this worker the call counts against."""
        timeout = activity.info().start_to_close_timeout
        return self._model_calls.slot(
            model_call_keys(self._flow.runner, request.session_settings),
            heartbeat=activity.heartbeat,
            interval=request.heartbeat_interval,
            max_wait=timeout.total_seconds() / 2 if timeout else None,
        )

    async def _stored_run_state(
        self, request: RunModelInput, state: str, outcome_name: str
    ) -> tuple[str, BodyRef | None]:
        """The run state as the workflow records it: inline when small, else ("", its reference)."""
        if not state:
            raise SessionStateError(f"{outcome_name} has an empty framework_run_state")
        bodies = self._steps.bodies
        if bodies is None:
            return state, None
        state_ref = await with_heartbeats(request.heartbeat_interval, bodies.store_text(state, store_scope()))
        return ("", state_ref) if state_ref is not None else (state, None)

    async def _resolved(self, entries: list[AgentMessage]) -> list[AgentMessage]:
        """The messages as the runner first returned them, bodies read back from the store."""
        if not any(stored.message.body is not None for stored in entries):
            return entries
        bodies = self._steps.require_bodies()
        return [
            replace(stored, message=await bodies.load_message(stored.message))
            if stored.message.body
            else stored
            for stored in entries
        ]

    async def _model_view(self, record: AgentToolCall) -> AgentToolCall:
        """A tool call record as the model sees it: its whole output, capped for the model."""
        cap = self._flow.options.tool_output_cap(record.policy)
        if record.state_update_ref is not None:
            # The update is framework state, never capped: the runner gets all of it.
            update = await self._steps.require_bodies().load_text(record.state_update_ref, cache=False)
            record = replace(record, state_update=update, state_update_ref=None)
        if record.output_ref is not None:
            return await self._steps.require_bodies().model_view(record, cap)
        if record.output is None:
            return record
        return replace(record, output=cap_text(record.output, cap))

    async def _completed(
        self, request: RunModelInput, entries: list[AgentMessage], outcome: TurnCompleted
    ) -> RunModelResult:
        """Store the turn's large messages and the index chunk that covers the whole turn."""
        bodies = self._steps.bodies
        if outcome.replaced_messages:
            # The turn rewrote messages it stored (a redaction): what the session keeps, and
            # what this worker's cache must forget.
            entries = _with_replaced(entries, outcome.replaced_messages)
            self._messages.forget(request)
        if bodies is None:
            self._messages.remember(request, entries, outcome.new_messages)
            return RunModelResult(completed=outcome)
        scope = store_scope()
        if outcome.replaced_messages:
            replaced = [
                replace(m, message=await bodies.store_message(m.message, scope))
                for m in outcome.replaced_messages
            ]
            outcome = replace(outcome, replaced_messages=replaced)
            entries = _with_replaced(entries, replaced)
        kept = [await bodies.store_message(m, scope) for m in outcome.new_messages]
        start = len(entries) + 1
        added = [
            AgentMessage(sequence=start + i, turn_id=request.turn_id, message=m) for i, m in enumerate(kept)
        ]
        covered = request.prefix_count if request.prefix_ref is not None else 0
        unindexed = [*entries[covered:], *added]
        if _inline_bytes(unindexed) <= min(UNINDEXED_MESSAGE_BYTES, bodies.inline_limit):
            # Few bytes not indexed yet: they keep riding inline, and this turn writes nothing.
            self._messages.remember(request, entries, kept)
            return RunModelResult(completed=replace(outcome, new_messages=kept))
        chunk = MessageIndexChunk(
            first=covered + 1,
            entries=unindexed,
            parent=request.prefix_ref if covered else None,
        )
        digest = self._messages.digest_after(request, entries, added)
        index_ref = await bodies.put(chunk, scope)
        self._messages.remember(request, entries, kept)
        return RunModelResult(
            completed=replace(outcome, new_messages=kept),
            index_ref=index_ref,
            index_count=len(entries) + len(added),
            index_digest=digest,
        )


def _previewed(
    call: DeferredToolCall, previewer: ApprovalPreviewer, settings: Mapping[str, Any]
) -> DeferredToolCall:
    """`call` with the flow's preview when it will wait for a person (never failing the step)."""
    try:
        if call.proposal_error is not None or not decide_approval(call).waits:
            return call
        preview = previewer(call, settings)
    except Exception:  # a preview is a courtesy: the call asks without one
        _log.warning("the approval preview of %r failed", call.tool_name, exc_info=True)
        return call
    return replace(call, preview=bounded_preview(preview)) if preview is not None else call


def _answer_text(result: RunModelResult) -> str:
    """A last step that streamed nothing (a model called without streaming): its answer's text."""
    if result.completed is None:
        return ""
    answers = [m for m in result.completed.new_messages if m.role is MessageRole.ASSISTANT]
    return (answers[-1].text or "") if answers else ""


def _with_replaced(entries: list[AgentMessage], replaced: list[AgentMessage]) -> list[AgentMessage]:
    """``entries`` with the turn's replaced messages in place (by sequence)."""
    by_sequence = {m.sequence: m for m in replaced}
    return [
        replace(e, message=by_sequence[e.sequence].message) if e.sequence in by_sequence else e
        for e in entries
    ]


def _inline_bytes(messages: list[AgentMessage]) -> int:
    return sum(inline_size(m.message.framework_item, m.message.text) for m in messages)
