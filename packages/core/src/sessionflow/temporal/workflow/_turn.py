"""The turn driver: one user message, then model steps (and their tool calls) until the turn ends."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import replace
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.bodies import INLINE_BODY_BYTES, fits_inline, is_media_ref
    from sessionflow.session.errors import SessionStateError
    from sessionflow.session.messages import FrameworkMessage, MessageRole
    from sessionflow.session.notes import build_turn_failure_note
    from sessionflow.session.queued_message import QueuedUserMessage
    from sessionflow.session.state import AgentStatus
    from sessionflow.session.tools import AgentToolCall
    from sessionflow.temporal._metrics import TURNS, workflow_count
    from sessionflow.temporal._payloads import (
        BUILD_USER_MESSAGE,
        RUN_MODEL,
        BuildUserMessageInput,
        RunModelInput,
        RunModelResult,
    )
    from sessionflow.temporal._summaries import model_name_of, model_summary
    from sessionflow.temporal.workflow._cancel import TURN_CANCELLED, TurnCancelled
    from sessionflow.temporal.workflow._context import SessionContext
    from sessionflow.temporal.workflow._continue_as_new import Continuation
    from sessionflow.temporal.workflow._failures import describe_failure
    from sessionflow.temporal.workflow._tool_calls import ToolCalls
    from sessionflow.temporal.workflow._visibility import Visibility


STEP_EVENTS_PATCH = "sessionflow-model-step-events"
"""Marks runs that emit `model_step_completed` events (issue 44)."""


class TurnDriver:
    """Runs the session's turns one at a time; each ends completed, stopped or failed, never raising."""

    def __init__(
        self, session: SessionContext, tools: ToolCalls, visibility: Visibility, continuation: Continuation
    ) -> None:
        self._session = session
        self._tools = tools
        self._visibility = visibility
        self._continuation = continuation
        self._model_calls = 0

    def start(self, queued: QueuedUserMessage) -> asyncio.Task[None]:
        """Start the turn for the next queued message, with no cancel and no model call yet."""
        self._session.cancel.requested = False
        self._model_calls = 0
        return asyncio.create_task(self._run_turn(queued))

    def resume(self) -> asyncio.Task[None]:
        """Go on with the turn the previous run carried: it continued as new between two steps.

        Nothing of the turn was running then (no step, no approval, no cancel), and every
        count the turn keeps is in the carried model; the steps' IDs go on from it.
        """
        self._session.cancel.requested = False
        self._model_calls = self._session.model.turn_model_calls
        return asyncio.create_task(self._guarded(self._resumed_steps()))

    async def _resumed_steps(self) -> None:
        model = self._session.model
        if model.state.status is AgentStatus.RUNNING_TOOLS:
            # It moved while its calls waited for approvals: wait on, then go on.
            if await self._tools_ended(list(model.tool_calls.values())):
                return
        await self._steps()

    async def _run_turn(self, queued: QueuedUserMessage) -> None:
        session = self._session
        model = session.model
        model.begin_turn(workflow.now(), message_id=queued.message_id)
        model.turn_settings = dict(queued.settings)
        self._visibility.show_state()
        model.media += [image for image in queued.images if is_media_ref(image) and image not in model.media]
        await self._guarded(self._first_steps(queued))

    async def _first_steps(self, queued: QueuedUserMessage) -> None:
        user_message = queued.message
        if user_message is None or not _usable_client_message(user_message, queued):
            user_message = await self._build_user_message(queued.text, queued.images)
        self._session.model.store_user_message(user_message)
        await self._steps()

    async def _steps(self) -> None:
        """Model steps and their tool calls until the turn ends; between two steps, the run
        may continue as new (`Continuation.continue_mid_turn`), carrying the turn."""
        session = self._session
        model = session.model
        cancel = session.cancel
        budget = session.config.budget if session.config is not None else None
        while True:
            await self._continuation.continue_mid_turn()
            cancel.raise_if_requested()
            over = model.budget_stop_before_model_call(budget, workflow.now())
            if over is not None:
                await self._stop_turn(over[0].value, over[1])
                return
            steered = await self._steered_messages()
            result = await self._run_model(steered)
            if result.completed is not None:
                self._record_step(result)
                model.complete_turn(result.completed, budget, now=workflow.now())
                workflow_count(TURNS, {"outcome": "completed"})
                if result.index_ref is not None:
                    model.record_index(result.index_ref, result.index_count, result.index_digest)
                return
            if result.continued is not None:
                # The next pass of the loop is the next model call: its own step, with
                # the budget checks and the cancel check of any model call.
                model.continue_model(
                    result.continued, max_continues=session.settings.max_continues_per_turn, budget=budget
                )
                self._record_step(result)
                if model.stop_reason is not None:
                    await self._stop_turn(model.stop_reason, model.stop_detail)
                    return
                continue
            assert result.requested is not None
            records = model.request_tools(
                result.requested, now=workflow.now(), deadline=self._interrupt_deadline(), budget=budget
            )
            self._record_step(result)
            if await self._tools_ended(records):
                return

    def _record_step(self, result: RunModelResult) -> None:
        """Keep the step's text and calls in the turn's record, and tell followers (an event).

        The record is the session's own memory, rebuilt the same on any replay; the event
        takes an offset in the event log, so only runs that recorded the marker emit it and
        a client resuming by offset after a worker restart sees the same offsets.
        """
        model = self._session.model
        calls = result.requested.tool_calls if result.requested is not None else []
        recorded = model.record_model_step(
            model.model_step, result.step_text, [c.tool_call_id for c in calls], workflow.now().isoformat()
        )
        if workflow.patched(STEP_EVENTS_PATCH):
            model.emit_model_step(recorded)

    async def _tools_ended(self, records: list[AgentToolCall]) -> bool:
        """Run the calls of a model step; True when the turn stopped after them."""
        model = self._session.model
        cancel = self._session.cancel
        # Calls that passed every check run even when the batch also asked for one
        # that must not; the turn stops after them, before the next model call.
        await self._tools.run(records)
        if model.stop_reason is not None:
            cancel.raise_if_requested()
            await self._stop_turn(model.stop_reason, model.stop_detail)
            return True
        cancel.raise_if_requested()
        model.resume_model()
        return False

    async def _guarded(self, work: Awaitable[None]) -> None:
        """Run the turn's `work`, ending the turn as failed or cancelled when it raises."""
        cancel = self._session.cancel
        try:
            await work
        except TurnCancelled:
            await self._fail_turn(TURN_CANCELLED, reason="cancelled")
        except asyncio.CancelledError:
            if not cancel.requested:
                raise
            await self._fail_turn(TURN_CANCELLED, reason="cancelled")
        except ActivityError as error:
            if cancel.caused(error):
                await self._fail_turn(TURN_CANCELLED, reason="cancelled")
            else:
                await self._fail_turn(f"model call failed: {describe_failure(error)}")
        except SessionStateError as error:
            await self._fail_turn(f"invalid model step: {error.message}")

    def _interrupt_deadline(self) -> timedelta | None:
        seconds = self._session.settings.interrupt_deadline
        return timedelta(seconds=seconds) if seconds is not None else None

    async def _build_user_message(self, text: str, images: list[str]) -> FrameworkMessage:
        return await workflow.execute_local_activity(
            BUILD_USER_MESSAGE,
            BuildUserMessageInput(text=text, images=images),
            result_type=FrameworkMessage,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=RetryPolicy(maximum_attempts=3),
        )

    async def _steered_messages(self) -> list[FrameworkMessage]:
        """The messages waiting to steer the turn, built as the runner's user messages.

        They stay waiting until the step is scheduled (`_run_model` joins them), so a cancel
        while one is built leaves them for the next turn. One that came in meanwhile waits
        for the step after.
        """
        model = self._session.model
        built: list[FrameworkMessage] = []
        for queued in list(model.steered):
            message = queued.message
            if message is None or not _usable_client_message(message, queued):
                message = await self._build_user_message(queued.text, queued.images)
            model.media += [
                image for image in queued.images if is_media_ref(image) and image not in model.media
            ]
            built.append(message)
        if built:
            self._session.cancel.raise_if_requested()
        return built

    async def _run_model(self, steered: list[FrameworkMessage]) -> RunModelResult:
        session = self._session
        config = session.settings
        model = session.model
        turn_id = model.state.turn_id
        assert turn_id is not None
        # Messages the stored index covers travel by reference; the rest (this turn's user
        # message, notes of failed turns) inline.
        tail = model.messages_after_index()
        prefix_count = model.index_count
        prefix_digest = model.messages_digest_at(prefix_count)
        self._model_calls += 1
        model.count_model_call()
        activity_id = f"{turn_id}/model-{self._model_calls}"
        model.model_step = activity_id
        if steered:
            model.join_steered(steered, step=activity_id)
        task = asyncio.ensure_future(
            workflow.execute_activity(
                RUN_MODEL,
                RunModelInput(
                    session_id=workflow.info().workflow_id,
                    session_nonce=session.nonce,
                    turn_id=turn_id,
                    framework_run_state=model.run_state,
                    # A stored output travels as its reference only: the step reads it whole.
                    tool_calls=[
                        replace(r, output=None) if r.output_ref else r for r in model.model_step_tool_calls()
                    ],
                    tail=tail,
                    prefix_count=prefix_count,
                    prefix_digest=prefix_digest,
                    heartbeat_interval=config.heartbeat_interval,
                    session_settings=model.turn_settings,
                    prefix_ref=model.index_ref,
                    framework_run_state_ref=model.run_state_ref,
                    media=list(model.media),
                    accepts_continue=True,
                    # A stored carry travels as its reference only (the model keeps its preview).
                    carried_state=None if model.carried_state_ref else model.carried_state,
                    carried_state_ref=model.carried_state_ref,
                    accepts_asks=True,
                    steered=steered,
                ),
                result_type=RunModelResult,
                activity_id=activity_id,
                summary=model_summary(
                    self._model_calls, model_name_of(model.turn_settings, config.model_name)
                ),
                start_to_close_timeout=timedelta(seconds=config.model_start_to_close),
                schedule_to_close_timeout=timedelta(seconds=config.model_schedule_to_close),
                heartbeat_timeout=timedelta(seconds=config.model_heartbeat_timeout),
                retry_policy=RetryPolicy(
                    maximum_attempts=config.model_max_attempts,
                    initial_interval=timedelta(seconds=config.retry_initial_interval),
                ),
            )
        )
        session.model_step_running = True
        try:
            return await session.cancel.step(task)
        finally:
            session.model_step_running = False

    # -- how a turn ends when it does not complete ------------------------------------------

    async def _stop_turn(self, reason: str, detail: str) -> None:
        """End a turn the session stopped on its own, leaving a note the next turn's model sees."""
        model = self._session.model
        model.abandon_unstarted_calls(f"turn stopped: {reason}", workflow.now())
        note_text = build_turn_failure_note(model.tool_calls.values(), stop_reason=reason, stop_detail=detail)
        error = f"turn stopped ({reason}): {detail}"
        workflow_count(TURNS, {"outcome": "stopped"})
        note: FrameworkMessage | None = None
        if note_text is not None:
            try:
                note = await self._build_user_message(note_text, [])
            except ActivityError as note_error:
                error = f"{error}; the note could not be built: {describe_failure(note_error)}"
        model.fail_turn(error, note, reason=reason, now=workflow.now())

    async def _fail_turn(self, error: str, *, reason: str = "error") -> None:
        workflow_count(TURNS, {"outcome": reason})
        model = self._session.model
        model.abandon_unstarted_calls(TURN_CANCELLED, workflow.now())
        note_text = build_turn_failure_note(model.tool_calls.values())
        note: FrameworkMessage | None = None
        if note_text is not None:
            try:
                note = await self._build_user_message(note_text, [])
            except ActivityError as note_error:
                error = f"{error}; the turn-failure note could not be built: {describe_failure(note_error)}"
        model.fail_turn(error, note, reason=reason, now=workflow.now())


def _usable_client_message(message: FrameworkMessage, queued: QueuedUserMessage) -> bool:
    # A client's message is kept only as the step would have kept it: a user message for
    # the text alone, small enough to stay inline (a larger one goes to the step, which
    # stores it by reference). Anything else is rebuilt by the step, not refused.
    return (
        message.role is MessageRole.USER
        and message.body is None
        and not queued.images
        and fits_inline(message.framework_item, message.text, INLINE_BODY_BYTES)
    )
