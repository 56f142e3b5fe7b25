"""The session workflow's message handlers: its updates (messages, answers, cancel, stop), signals and queries.

They are a mixin because Temporal finds handlers on the workflow class: it walks the class's
members, inherited ones included, so `AgentSessionWorkflow` gets these by inheriting them.
This class is not itself a workflow definition.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.approvals import InvalidAnswerError, StaleApprovalError, check_answer
    from sessionflow.session.double_texting import DoubleTextingAction
    from sessionflow.session.events import AgentEventsPage
    from sessionflow.session.interrupts import check_digest
    from sessionflow.session.model import SessionModel
    from sessionflow.session.queued_message import QueuedUserMessage
    from sessionflow.session.state import AgentMessagesPage, AgentSnapshot
    from sessionflow.session.turn_records import TurnRecord
    from sessionflow.temporal._payloads import (
        CANCEL_TURN,
        CHECK_VERSION,
        GET_AGENT_SNAPSHOT,
        LIST_AGENT_EVENTS,
        LIST_AGENT_MESSAGES,
        LIST_TURNS,
        PUBLISH_DELTAS,
        RESOLVE_INTERRUPT,
        SEND_USER_MESSAGE,
        STOP_SESSION,
        DeltaBatch,
        ListAgentEventsRequest,
        ListAgentMessagesRequest,
        ResolveInterruptRequest,
        SendUserMessageRequest,
    )
    from sessionflow.temporal.workflow._context import SessionContext

DOUBLE_TEXTING_PATCH = "sessionflow-double-texting"
"""Marks runs where a message sent during a turn cancelled it or was refused (issue 27)."""

STEER_PATCH = "sessionflow-steer"
"""Marks runs where a message sent during a turn joined it (double-texting `steer`, issue 46)."""

_CANCEL_OR_REJECT = (DoubleTextingAction.CANCEL_AND_QUEUE, DoubleTextingAction.REJECT)


class SessionHandlers:
    """What clients send to and ask of a running session; the workflow class sets `_session`."""

    _session: SessionContext

    # -- updates -------------------------------------------------------------------------

    @workflow.update(name=SEND_USER_MESSAGE)
    def send_user_message(self, request: SendUserMessageRequest) -> bool:
        session = self._session
        model = session.model
        # Decided here, in the update's handler, so no turn can end or start between the
        # check and the queueing. Requests recorded before double-texting always queue.
        action = model.decide_user_message(
            request.message_id,
            request.double_texting,
            cancel_requested=session.cancel.requested,
            steering=session.config is not None and session.config.steering,
        )
        # Only a request sent as `steer` (which no run recorded before it could send) steers.
        steer = action is DoubleTextingAction.STEER and workflow.patched(STEER_PATCH)
        if action in _CANCEL_OR_REJECT and workflow.patched(DOUBLE_TEXTING_PATCH):
            if action is DoubleTextingAction.REJECT:
                rejected = model.reject_user_message(request.message_id)
                # An ApplicationError fails only the update; its type tells the client why.
                raise ApplicationError(rejected.message, type=type(rejected).__name__, non_retryable=True)
            # The cancel the client's `cancel_turn` makes; the message then waits its turn.
            session.request_cancel()
        # A steered message waits in the model for the turn's next model step (`TurnDriver`).
        return model.queue_user_message(
            QueuedUserMessage(
                text=request.text,
                images=request.images,
                settings=request.settings,
                message_id=request.message_id,
                message=request.message,
            ),
            steer=steer,
        )

    @send_user_message.validator
    def _validate_send_user_message(self, request: SendUserMessageRequest) -> None:
        if self._session.model.stopped:
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
        if not self._session.model.can_resolve(interrupt_id, workflow.now()):
            return False
        self._check_answer(request)
        self._session.model.resolve_interrupt(
            interrupt_id,
            approved=request.approved,
            rejection_message=None if request.approved else request.rejection_message,
            now=workflow.now(),
            answer=request.answer if request.approved else None,
            digest=request.digest,
            answered_by=request.answered_by,
        )
        return True

    @resolve_interrupt.validator
    def _validate_resolve_interrupt(self, request: ResolveInterruptRequest) -> None:
        interrupt_id = request.interrupt_id
        if not (
            self._session.model.can_resolve(interrupt_id, workflow.now()) or self._may_be_raised(interrupt_id)
        ):
            raise ValueError(f"interrupt {interrupt_id!r} is not pending or is past its deadline")
        self._check_answer(request)

    def _check_answer(self, request: ResolveInterruptRequest) -> None:
        """Refuse a question approved without an answer (or with one too long); the question stays pending."""
        interrupt = self._session.model.find_interrupt(request.interrupt_id)
        if interrupt is None:
            return
        try:
            check_answer(interrupt.kind, approved=request.approved, answer=request.answer)
            check_digest(interrupt, request.digest)
        except (InvalidAnswerError, StaleApprovalError) as error:
            # An ApplicationError fails only the update, and its type tells the client why.
            raise ApplicationError(error.message, type=type(error).__name__, non_retryable=True) from None

    def _may_be_raised(self, interrupt_id: str) -> bool:
        """Not pending yet, but the running model step's result may raise it."""
        session = self._session
        model = session.model
        return (
            session.model_step_running
            and model.find_interrupt(interrupt_id) is None
            and model.is_current_turn_interrupt(interrupt_id)
        )

    @workflow.update(name=CANCEL_TURN)
    def cancel_turn(self) -> bool:
        if not self._session.model.turn_active or self._session.cancel.requested:
            return False  # a second cancel delivered with the first one
        self._session.request_cancel()
        return True

    @cancel_turn.validator
    def _validate_cancel_turn(self) -> None:
        if not self._session.model.turn_active or self._session.cancel.requested:
            raise ValueError("no turn is running")

    @workflow.update(name=STOP_SESSION)
    def stop_session(self) -> bool:
        self._session.model.stopped = True
        if self._session.model.turn_active:
            self._session.request_cancel()
        return True

    # -- signals -------------------------------------------------------------------------

    @workflow.signal(name=CHECK_VERSION)
    def check_version(self) -> None:
        """Nothing to do: the signal's workflow task tells an idle session that a new version is current."""

    @workflow.signal(name=PUBLISH_DELTAS)
    def publish_deltas(self, batch: DeltaBatch) -> None:
        for event in batch.events:
            self._session.model.event_log.append(event)

    # -- queries -------------------------------------------------------------------------

    @workflow.query(name=LIST_AGENT_EVENTS)
    def list_agent_events(self, request: ListAgentEventsRequest) -> AgentEventsPage:
        model = self._session.model
        page = model.event_log.read(request.after, request.limit)
        if model.stopped and not model.turn_active:
            return AgentEventsPage(
                events=page.events, next_offset=page.next_offset, truncated=page.truncated, closed=True
            )
        return page

    @workflow.query(name=GET_AGENT_SNAPSHOT)
    def get_agent_snapshot(self) -> AgentSnapshot:
        return self._session.snapshot()

    @workflow.query(name=LIST_TURNS)
    def list_turns(self) -> list[TurnRecord]:
        return self._session.model.turn_records_view()

    @workflow.query(name=LIST_AGENT_MESSAGES)
    def list_agent_messages(self, request: ListAgentMessagesRequest) -> AgentMessagesPage:
        return self._session.model.page(
            after=request.after, limit=request.limit, hide_superseded=request.hide_superseded
        )
