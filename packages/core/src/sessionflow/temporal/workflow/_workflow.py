"""The session workflow: one execution per session, driving the pure `SessionModel`."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue, RetryPolicy, SearchAttributeUpdate
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.approvals import InvalidAnswerError, check_answer
    from sessionflow.session.bodies import INLINE_BODY_BYTES, fits_inline, is_media_ref
    from sessionflow.session.double_texting import DoubleTexting, DoubleTextingAction
    from sessionflow.session.errors import SessionRunError, SessionStateError
    from sessionflow.session.events import AgentEventsPage
    from sessionflow.session.memory import MEMORY_TOOL_NAMES, MemoryStore
    from sessionflow.session.messages import FrameworkMessage, MessageRole
    from sessionflow.session.model import SessionModel
    from sessionflow.session.notes import build_turn_failure_note
    from sessionflow.session.queued_message import QueuedUserMessage
    from sessionflow.session.state import AgentMessagesPage, AgentSnapshot
    from sessionflow.session.tools import AgentToolCall, AgentToolCallStatus, ToolEffect
    from sessionflow.session.verify import EffectUnknown
    from sessionflow.temporal._metrics import (
        APPROVALS_REQUESTED,
        APPROVALS_RESOLVED,
        OUTCOME_UNKNOWN,
        TOOL_CALLS,
        TURNS,
        workflow_count,
    )
    from sessionflow.temporal._payloads import (
        BUILD_USER_MESSAGE,
        CALL_SINGLE_ATTEMPT_TOOL,
        CALL_TOOL,
        CANCEL_TURN,
        CHECK_VERSION,
        GET_AGENT_SNAPSHOT,
        LIST_AGENT_EVENTS,
        LIST_AGENT_MESSAGES,
        PUBLISH_DELTAS,
        RESOLVE_INTERRUPT,
        RUN_MODEL,
        SEND_USER_MESSAGE,
        STOP_SESSION,
        VERIFY_TOOL,
        BuildUserMessageInput,
        DeltaBatch,
        ListAgentEventsRequest,
        ListAgentMessagesRequest,
        ResolveInterruptRequest,
        RunModelInput,
        RunModelResult,
        SendUserMessageRequest,
        SessionRunConfig,
        SessionStartInput,
        ToolCallInput,
        ToolCallOutput,
        VerifyToolOutput,
    )
    from sessionflow.temporal._search_attributes import LAST_ACTIVITY_KEY, STATE_KEY, SessionState
    from sessionflow.temporal._summaries import model_name_of, model_summary, session_details, tool_summary

TURN_CANCELLED = "turn cancelled"
VERIFY_PATCH = "sessionflow-verify"
"""Marks histories whose dead writes may be followed by a verify step (issue 20, verified outcomes)."""
VERSION_UPGRADE_PATCH = "sessionflow-version-upgrade"
"""Marks runs that continued as new onto a new current worker deployment version (issue 26)."""
SEARCH_ATTRIBUTES_PATCH = "sessionflow-search-attributes"
"""Marks runs that upsert their state and last activity as search attributes (issue 26)."""
DOUBLE_TEXTING_PATCH = "sessionflow-double-texting"
"""Marks runs where a message sent during a turn cancelled it or was refused (issue 27)."""
# No list of non-retryable error types here: an error's class says whether a step may run
# again (`SessionError.retryable`), and the activity reports it as non-retryable.


class TurnCancelled(SessionRunError):
    """Raised inside the turn when a client cancels it."""

    def __init__(self, message: str = TURN_CANCELLED) -> None:
        super().__init__(message)


def describe_failure(error: BaseException) -> str:
    """A one-line reason for a failed step, from the innermost useful cause."""
    cause: BaseException = error
    while isinstance(cause, ActivityError) and cause.cause is not None:
        cause = cause.cause
    if isinstance(cause, TimeoutError):
        return f"timed out ({cause.type.name.lower() if cause.type else 'unknown'})"
    if isinstance(cause, ApplicationError):
        return f"{cause.type}: {cause.message}" if cause.type else cause.message
    return str(cause) or repr(cause)


@workflow.defn(dynamic=True)
class AgentSessionWorkflow:
    """Serves every flow type: the workflow type is the flow type, and so is the task queue."""

    def __init__(self) -> None:
        self._model = SessionModel()
        self._started = False
        self._config: SessionRunConfig | None = None
        self._environment: dict[str, str] = {}
        self._nonce = ""
        self._cancel_requested = False
        self._model_calls = 0
        self._model_step_running = False
        self._turn_task: asyncio.Task[None] | None = None
        self._cancellable: set[asyncio.Future[Any]] = set()
        self._upgrade_declined = False
        self._upserts: bool | None = None
        # A session starts idle (its client says so), and continues as new between turns.
        self._upserted_state = SessionState.IDLE

    # -- main loop -----------------------------------------------------------------------

    @workflow.run
    async def run(self, args: Sequence[RawValue]) -> AgentSnapshot:
        start = workflow.payload_converter().from_payload(args[0].payload, SessionStartInput)
        self._config = start.timings
        self._environment = dict(start.environment)
        self._nonce = start.session_nonce or str(workflow.uuid4())
        if start.carried is not None:
            self._model = start.carried
        else:
            self._load_history(start)
            self._model.double_texting = start.double_texting or DoubleTexting.ENQUEUE
            self._model.forked_from = start.forked_from
            if start.initial_message is not None:
                self._model.queue_user_message(
                    QueuedUserMessage(
                        text=start.initial_message,
                        settings=start.initial_settings,
                        message=start.initial_user_message,
                    )
                )
        self._model.event_log.max_bytes = start.timings.event_retention_bytes
        memory = start.timings.memory
        if memory is not None and self._model.memory is None:
            self._model.memory = MemoryStore(
                owner=start.environment.get("user", "user"),
                max_notes=memory.max_notes,
                max_chars=memory.max_chars,
                ttl_seconds=memory.ttl_seconds,
            )
        self._started = True
        self._show_state()
        while True:
            # Between turns, a new current version of the worker deployment is a reason to
            # wake up too: the session leaves the old version as soon as its turn ends.
            await workflow.wait_condition(
                lambda: bool(self._model.queued) or self._model.stopped or self._new_version_offered()
            )
            if self._model.stopped:
                break
            upgrade = self._should_upgrade()
            if not upgrade and not self._model.queued:
                continue
            if upgrade or self._should_continue_as_new():
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(
                    SessionStartInput(
                        timings=self._config,
                        environment=self._environment,
                        session_nonce=self._nonce,
                        carried=self._model,
                    ),
                    # The next run starts on the current version, then is pinned there.
                    initial_versioning_behavior=workflow.ContinueAsNewVersioningBehavior.AUTO_UPGRADE
                    if upgrade
                    else None,
                )
            self._cancel_requested = False
            self._model_calls = 0
            self._turn_task = asyncio.create_task(self._run_turn(self._model.next_queued()))
            await self._turn_task
            self._turn_task = None
            self._show_state()
        self._show_state()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._snapshot()

    def _load_history(self, start: SessionStartInput) -> None:
        # Inputs recorded before histories have none: nothing changes for them.
        if not start.history:
            return
        model = self._model
        model.load_history(start.history)
        if start.history_index_ref is not None:
            # The digest is the workflow's own: a model step checks the chunk it reads against it.
            model.record_index(start.history_index_ref, len(model.messages), model.digest)

    def _new_version_offered(self) -> bool:
        # Only a run pinned to a worker deployment version is told; unversioned runs never are.
        return not self._upgrade_declined and workflow.info().is_target_worker_deployment_version_changed()

    def _should_upgrade(self) -> bool:
        """Continue as new onto the deployment's current version (checked between turns only)."""
        if not self._new_version_offered():
            return False
        if workflow.patched(VERSION_UPGRADE_PATCH):
            return True
        # A run recorded before this code was told too, and went on waiting: so does its replay.
        self._upgrade_declined = True
        return False

    def _should_continue_as_new(self) -> bool:
        assert self._config is not None
        info = workflow.info()
        return (
            info.is_continue_as_new_suggested()
            or info.get_current_history_length() >= self._config.continue_as_new_after_events
        )

    # -- one turn ------------------------------------------------------------------------

    async def _run_turn(self, queued: QueuedUserMessage) -> None:
        model = self._model
        model.begin_turn(workflow.now())
        model.turn_settings = dict(queued.settings)
        self._show_state()
        model.media += [image for image in queued.images if is_media_ref(image) and image not in model.media]
        budget = self._config.budget if self._config is not None else None
        try:
            user_message = queued.message
            if user_message is None or not _usable_client_message(user_message, queued):
                user_message = await self._build_user_message(queued.text, queued.images)
            model.store_user_message(user_message)
            while True:
                self._raise_if_cancelled()
                over = model.budget_stop_before_model_call(budget, workflow.now())
                if over is not None:
                    await self._stop_turn(over[0].value, over[1])
                    return
                result = await self._run_model()
                if result.completed is not None:
                    model.complete_turn(result.completed, budget)
                    workflow_count(TURNS, {"outcome": "completed"})
                    if result.index_ref is not None:
                        model.record_index(result.index_ref, result.index_count, result.index_digest)
                    return
                if result.continued is not None:
                    # The next pass of the loop is the next model call: its own step, with
                    # the budget checks and the cancel check of any model call.
                    model.continue_model(result.continued, max_continues=self._max_continues(), budget=budget)
                    if model.stop_reason is not None:
                        await self._stop_turn(model.stop_reason, model.stop_detail)
                        return
                    continue
                assert result.requested is not None
                records = model.request_tools(
                    result.requested, now=workflow.now(), deadline=self._interrupt_deadline(), budget=budget
                )
                # Calls that passed every check run even when the batch also asked for one
                # that must not; the turn stops after them, before the next model call.
                await asyncio.gather(*(self._counted_tool_call(r) for r in records if not r.is_final))
                if model.stop_reason is not None:
                    self._raise_if_cancelled()
                    await self._stop_turn(model.stop_reason, model.stop_detail)
                    return
                self._raise_if_cancelled()
                model.resume_model()
        except TurnCancelled:
            await self._fail_turn(TURN_CANCELLED, reason="cancelled")
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            await self._fail_turn(TURN_CANCELLED, reason="cancelled")
        except ActivityError as error:
            if self._cancel_requested and is_cancelled_exception(error):
                await self._fail_turn(TURN_CANCELLED, reason="cancelled")
            else:
                await self._fail_turn(f"model call failed: {describe_failure(error)}")
        except SessionStateError as error:
            await self._fail_turn(f"invalid model step: {error.message}")

    def _raise_if_cancelled(self) -> None:
        if self._cancel_requested:
            raise TurnCancelled

    def _max_continues(self) -> int:
        assert self._config is not None
        return self._config.max_continues_per_turn

    def _interrupt_deadline(self) -> timedelta | None:
        assert self._config is not None
        seconds = self._config.interrupt_deadline
        return timedelta(seconds=seconds) if seconds is not None else None

    async def _build_user_message(self, text: str, images: list[str]) -> FrameworkMessage:
        return await workflow.execute_local_activity(
            BUILD_USER_MESSAGE,
            BuildUserMessageInput(text=text, images=images),
            result_type=FrameworkMessage,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=RetryPolicy(maximum_attempts=3),
        )

    async def _run_model(self) -> RunModelResult:
        config = self._config
        assert config is not None
        model = self._model
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
        task = asyncio.ensure_future(
            workflow.execute_activity(
                RUN_MODEL,
                RunModelInput(
                    session_id=workflow.info().workflow_id,
                    session_nonce=self._nonce,
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
        self._model_step_running = True
        try:
            return await self._cancellable_step(task)
        finally:
            self._model_step_running = False

    async def _cancellable_step(self, task: asyncio.Future[Any]) -> Any:
        self._cancellable.add(task)
        try:
            return await task
        finally:
            self._cancellable.discard(task)

    # -- tool calls ----------------------------------------------------------------------

    async def _counted_tool_call(self, record: AgentToolCall) -> None:
        """Run one call, then count how it ended (replay-safe metrics)."""
        await self._run_tool_call(record)
        final = self._model.record(record.tool_call_id)
        effect = final.policy.effect.value
        workflow_count(TOOL_CALLS, {"tool_effect": effect, "outcome": final.status.value})
        if final.status is AgentToolCallStatus.OUTCOME_UNKNOWN:
            workflow_count(OUTCOME_UNKNOWN, {"tool_effect": effect})

    async def _run_tool_call(self, record: AgentToolCall) -> None:
        model = self._model
        tool_call_id = record.tool_call_id
        if record.status is AgentToolCallStatus.AWAITING_APPROVAL:
            workflow_count(APPROVALS_REQUESTED)
            self._show_state()
            try:
                await self._await_approval(record)
            finally:
                workflow_count(APPROVALS_RESOLVED)
            self._show_state()
            record = model.record(tool_call_id)
            if record.status is AgentToolCallStatus.REJECTED:
                return
        if self._cancel_requested:
            model.move_tool_call(tool_call_id, AgentToolCallStatus.REJECTED, rejection_message=TURN_CANCELLED)
            return
        if model.memory is not None and record.tool_name in MEMORY_TOOL_NAMES:
            # Memory lives in the session's own state, so the session runs these itself.
            model.run_memory_tool(record, workflow.now())
            return
        record = model.move_tool_call(tool_call_id, AgentToolCallStatus.RUNNING)
        effect = record.policy.effect
        config = self._config
        assert config is not None
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
                    activity_id=SessionModel.tool_step(turn_id, tool_call_id),
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
                    activity_id=SessionModel.tool_step(turn_id, tool_call_id),
                    summary=tool_summary(record.tool_name, record.arguments),
                    start_to_close_timeout=timedelta(seconds=config.tool_start_to_close),
                    schedule_to_close_timeout=timedelta(seconds=config.tool_schedule_to_close),
                    heartbeat_timeout=timedelta(seconds=config.tool_heartbeat_timeout),
                    retry_policy=retry_policy,
                )
            )
        try:
            # Only reads are cancelled with the turn: a write may already have taken effect.
            output = await (self._cancellable_step(step) if effect is ToolEffect.READ else step)
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            model.move_tool_call(tool_call_id, AgentToolCallStatus.FAILED, error=TURN_CANCELLED)
            return
        except ActivityError as error:
            reason = describe_failure(error)
            if effect is ToolEffect.READ:
                if self._cancel_requested and is_cancelled_exception(error):
                    reason = TURN_CANCELLED
                model.move_tool_call(tool_call_id, AgentToolCallStatus.FAILED, error=reason)
            elif record.verifiable and workflow.patched(VERIFY_PATCH):
                # Histories before verified outcomes ended the call here; the marker keeps
                # their replay on that path.
                await self._verify_write(tool_input, reason)
            else:
                model.move_tool_call(tool_call_id, AgentToolCallStatus.OUTCOME_UNKNOWN, error=reason)
            return
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

    async def _verify_write(self, tool_input: ToolCallInput, write_error: str) -> None:
        """The write's step died: ask the tool's verify, a read step, before recording its outcome."""
        config = self._config
        assert config is not None
        model = self._model
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
            found = await self._cancellable_step(step)
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            model.settle_by_verify(
                tool_call_id, EffectUnknown(reason=TURN_CANCELLED), write_error=write_error, step=step_id
            )
            return
        except ActivityError as error:
            reason = f"the verify step failed: {describe_failure(error)}"
            if self._cancel_requested and is_cancelled_exception(error):
                reason = TURN_CANCELLED
            model.settle_by_verify(
                tool_call_id, EffectUnknown(reason=reason), write_error=write_error, step=step_id
            )
            return
        model.settle_by_verify(
            tool_call_id, found.result(), write_error=write_error, step=step_id, output_ref=found.output_ref
        )

    async def _await_approval(self, record: AgentToolCall) -> None:
        model = self._model
        tool_call_id = record.tool_call_id

        def answered() -> bool:
            return model.record(tool_call_id).status is not AgentToolCallStatus.AWAITING_APPROVAL

        interrupt = model.find_interrupt(record.interrupt_id or "")
        if interrupt is None:
            return
        if interrupt.deadline is None:
            await workflow.wait_condition(answered)
            return
        deadline = datetime.fromisoformat(interrupt.deadline)
        while not answered():
            remaining = (deadline - workflow.now()).total_seconds()
            if remaining <= 0:
                model.expire_interrupt(interrupt.interrupt_id)
                return
            try:
                # Whole seconds, so a timer never fires a hair before the deadline it serves.
                await workflow.wait_condition(answered, timeout=float(int(remaining) + (remaining % 1 > 0)))
            except builtins.TimeoutError:
                continue

    # -- turn failure --------------------------------------------------------------------

    async def _stop_turn(self, reason: str, detail: str) -> None:
        """End a turn the session stopped on its own, leaving a note the next turn's model sees."""
        model = self._model
        model.abandon_unstarted_calls(f"turn stopped: {reason}")
        note_text = build_turn_failure_note(model.tool_calls.values(), stop_reason=reason, stop_detail=detail)
        error = f"turn stopped ({reason}): {detail}"
        workflow_count(TURNS, {"outcome": "stopped"})
        note: FrameworkMessage | None = None
        if note_text is not None:
            try:
                note = await self._build_user_message(note_text, [])
            except ActivityError as note_error:
                error = f"{error}; the note could not be built: {describe_failure(note_error)}"
        model.fail_turn(error, note, reason=reason)

    async def _fail_turn(self, error: str, *, reason: str = "error") -> None:
        workflow_count(TURNS, {"outcome": reason})
        model = self._model
        model.abandon_unstarted_calls(TURN_CANCELLED)
        note_text = build_turn_failure_note(model.tool_calls.values())
        note: FrameworkMessage | None = None
        if note_text is not None:
            try:
                note = await self._build_user_message(note_text, [])
            except ActivityError as note_error:
                error = f"{error}; the turn-failure note could not be built: {describe_failure(note_error)}"
        model.fail_turn(error, note, reason=reason)

    # -- what the Temporal UI and visibility show -----------------------------------------

    def _show_state(self) -> None:
        """Current details for the UI, and (when registered) the state search attributes."""
        model = self._model
        waiting = [
            r.tool_name
            for r in model.tool_calls.values()
            if r.status is AgentToolCallStatus.AWAITING_APPROVAL
        ]
        stopped = model.stopped and not model.turn_active
        workflow.set_current_details(
            session_details(
                stopped=stopped,
                turn_active=model.turn_active,
                turn_count=model.state.turn_count,
                waiting_for=waiting,
            )
        )
        if stopped:
            state = SessionState.STOPPED
        elif waiting:
            state = SessionState.WAITING_FOR_APPROVAL
        elif model.turn_active:
            state = SessionState.RUNNING
        else:
            state = SessionState.IDLE
        if state is self._upserted_state or not self._keeps_search_attributes():
            return
        self._upserted_state = state
        updates: list[SearchAttributeUpdate[Any]] = [
            STATE_KEY.value_set(state.value),
            LAST_ACTIVITY_KEY.value_set(workflow.now()),
        ]
        workflow.upsert_search_attributes(updates)  # pyright: ignore[reportUnknownMemberType]

    def _keeps_search_attributes(self) -> bool:
        # Only sessions whose client found the attributes registered upsert them (an
        # unregistered one would fail the workflow task); the patch keeps runs recorded
        # without upserts on that path when replayed.
        if self._upserts is None:
            config = self._config
            self._upserts = (
                config is not None and config.search_attributes and workflow.patched(SEARCH_ATTRIBUTES_PATCH)
            )
        return self._upserts

    # -- RPCs ----------------------------------------------------------------------------

    @workflow.update(name=SEND_USER_MESSAGE)
    def send_user_message(self, request: SendUserMessageRequest) -> bool:
        model = self._model
        # Decided here, in the update's handler, so no turn can end or start between the
        # check and the queueing. Requests recorded before double-texting always queue.
        action = model.decide_user_message(
            request.message_id, request.double_texting, cancel_requested=self._cancel_requested
        )
        if action is not DoubleTextingAction.QUEUE and workflow.patched(DOUBLE_TEXTING_PATCH):
            if action is DoubleTextingAction.REJECT:
                rejected = model.reject_user_message(request.message_id)
                # An ApplicationError fails only the update; its type tells the client why.
                raise ApplicationError(rejected.message, type=type(rejected).__name__, non_retryable=True)
            # The cancel the client's `cancel_turn` makes; the message then waits its turn.
            self._request_cancel()
        return model.queue_user_message(
            QueuedUserMessage(
                text=request.text,
                images=request.images,
                settings=request.settings,
                message_id=request.message_id,
                message=request.message,
            )
        )

    @send_user_message.validator
    def _validate_send_user_message(self, request: SendUserMessageRequest) -> None:
        if self._model.stopped:
            raise ValueError("the session is stopped")
        if not SessionModel.is_acceptable_text(request.text):
            raise ValueError("the message is blank")

    @workflow.update(name=RESOLVE_INTERRUPT)
    async def resolve_interrupt(self, request: ResolveInterruptRequest) -> bool:
        interrupt_id = request.interrupt_id
        if self._may_be_raised(interrupt_id):
            # The answer came with the model step's result that raises this approval: a
            # worker answered a query from a workflow task it died before completing, and
            # the retried task carries both. Updates are applied before activity results,
            # so wait until the result has been handled.
            await workflow.wait_condition(lambda: not self._may_be_raised(interrupt_id))
        # Checked again: two answers delivered in one activation both pass the validator
        # before either handler runs. The second one changes nothing and reports False.
        if not self._model.can_resolve(interrupt_id, workflow.now()):
            return False
        self._check_answer(request)
        self._model.resolve_interrupt(
            interrupt_id,
            approved=request.approved,
            rejection_message=None if request.approved else request.rejection_message,
            now=workflow.now(),
            answer=request.answer if request.approved else None,
        )
        return True

    @resolve_interrupt.validator
    def _validate_resolve_interrupt(self, request: ResolveInterruptRequest) -> None:
        interrupt_id = request.interrupt_id
        if not (self._model.can_resolve(interrupt_id, workflow.now()) or self._may_be_raised(interrupt_id)):
            raise ValueError(f"interrupt {interrupt_id!r} is not pending or is past its deadline")
        self._check_answer(request)

    def _check_answer(self, request: ResolveInterruptRequest) -> None:
        """Refuse a question approved without an answer (or with one too long); the question stays pending."""
        interrupt = self._model.find_interrupt(request.interrupt_id)
        if interrupt is None:
            return
        try:
            check_answer(interrupt.kind, approved=request.approved, answer=request.answer)
        except InvalidAnswerError as error:
            # An ApplicationError fails only the update, and its type tells the client why.
            raise ApplicationError(error.message, type=type(error).__name__, non_retryable=True) from None

    def _may_be_raised(self, interrupt_id: str) -> bool:
        """Not pending yet, but the running model step's result may raise it."""
        model = self._model
        return (
            self._model_step_running
            and model.find_interrupt(interrupt_id) is None
            and model.is_current_turn_interrupt(interrupt_id)
        )

    @workflow.update(name=CANCEL_TURN)
    def cancel_turn(self) -> bool:
        if not self._model.turn_active or self._cancel_requested:
            return False  # a second cancel delivered with the first one
        self._request_cancel()
        return True

    @cancel_turn.validator
    def _validate_cancel_turn(self) -> None:
        if not self._model.turn_active or self._cancel_requested:
            raise ValueError("no turn is running")

    @workflow.update(name=STOP_SESSION)
    def stop_session(self) -> bool:
        self._model.stopped = True
        if self._model.turn_active:
            self._request_cancel()
        return True

    def _request_cancel(self) -> None:
        self._cancel_requested = True
        for task in list(self._cancellable):
            task.cancel()
        # Open approvals are answered "no" at once, so the turn unwinds without waiting.
        self._model.reject_pending_interrupts(TURN_CANCELLED)

    @workflow.signal(name=CHECK_VERSION)
    def check_version(self) -> None:
        """Nothing to do: the signal's workflow task tells an idle session that a new version is current."""

    @workflow.signal(name=PUBLISH_DELTAS)
    def publish_deltas(self, batch: DeltaBatch) -> None:
        for event in batch.events:
            self._model.event_log.append(event)

    @workflow.query(name=LIST_AGENT_EVENTS)
    def list_agent_events(self, request: ListAgentEventsRequest) -> AgentEventsPage:
        page = self._model.event_log.read(request.after, request.limit)
        if self._model.stopped and not self._model.turn_active:
            return AgentEventsPage(
                events=page.events, next_offset=page.next_offset, truncated=page.truncated, closed=True
            )
        return page

    @workflow.query(name=GET_AGENT_SNAPSHOT)
    def get_agent_snapshot(self) -> AgentSnapshot:
        return self._snapshot()

    @workflow.query(name=LIST_AGENT_MESSAGES)
    def list_agent_messages(self, request: ListAgentMessagesRequest) -> AgentMessagesPage:
        return self._model.page(after=request.after, limit=request.limit)

    def _snapshot(self) -> AgentSnapshot:
        snapshot = self._model.snapshot(workflow.info().workflow_id, started=self._started)
        return replace(snapshot, environment=dict(self._environment))


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
