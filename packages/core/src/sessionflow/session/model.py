"""The pure session state machine that the durable workflow drives.

Every mutation of session state goes through this class, so the rules (legal status
moves, record finality, what a failed turn leaves behind) are tested without an engine.
It holds only plain, serializable values so the workflow can carry it across
continue-as-new unchanged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from sessionflow.session.approvals import MAX_ANSWER_BYTES, check_answer, decide_approval
from sessionflow.session.bodies import BodyRef, cap_text
from sessionflow.session.bounds import bounded_interrupt, bounded_messages, bounded_tool_call
from sessionflow.session.carry import carry_of, carry_preview
from sessionflow.session.double_texting import (
    DoubleTexting,
    DoubleTextingAction,
    MessageRejectedError,
    decide_double_texting,
)
from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEvent, AgentEventType, EventLog
from sessionflow.session.fork import ForkedFrom
from sessionflow.session.guardrails import Budget, ProposalCode, StopReason, call_fingerprint, estimate_tokens
from sessionflow.session.memory import MemoryCode, MemoryStore
from sessionflow.session.messages import AgentMessage, FrameworkMessage, MessageRole, message_digest
from sessionflow.session.outcomes import ContinueRequested, ToolCallsRequested, TurnCompleted
from sessionflow.session.state import (
    AgentInterrupt,
    AgentMessagesPage,
    AgentSnapshot,
    AgentState,
    AgentStatus,
)
from sessionflow.session.tool_state import check_state_update, without_applied_updates
from sessionflow.session.tools import (
    AgentToolCall,
    AgentToolCallStatus,
    DeferredToolCall,
    tool_arguments_object,
    validate_tool_call_ids,
)
from sessionflow.session.usage import AgentUsage
from sessionflow.session.verify import VerifyResult, checked_verify_basis, settled_by_verify, verify_answer

__all__ = ["HISTORY_TURN_ID", "MAX_PAGE_SIZE", "SNAPSHOT_MESSAGE_LIMIT", "QueuedUserMessage", "SessionModel"]

SNAPSHOT_MESSAGE_LIMIT = 200
SNAPSHOT_MESSAGE_BYTES = 512 * 1024
"""Bytes of messages a snapshot carries at most: the newest that fit."""
PAGE_BYTES = 512 * 1024
"""Bytes of messages one `list_agent_messages` page carries at most."""
RECENT_MESSAGE_IDS = 256
MAX_PAGE_SIZE = 200
APPROVAL_EXPIRED = "The approval deadline passed before anyone answered."
HISTORY_TURN_ID = "history"
"""The `turn_id` of messages a session started with (`load_history`): no turn produced them."""


@dataclass(frozen=True, kw_only=True)
class QueuedUserMessage:
    """A user message waiting for the current turn to end. Images are store paths.

    `settings` are the session settings the client sent with the message; they apply to
    the turn the message starts (the CLI uses them to narrow its configuration per turn).
    """

    text: str
    images: list[str] = field(default_factory=lambda: [])
    settings: dict[str, Any] = field(default_factory=lambda: {})
    message_id: str | None = None
    """A client-chosen ID: sending the same ID again queues nothing (a safe retry)."""
    message: FrameworkMessage | None = None
    """The framework's message for `text`, when the client built it (`AgentSessionClient`:
    no images, small enough to stay inline); None: the turn builds it in a step."""


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _tokens_of_size(size: int) -> int:
    # The same generous rate as `estimate_tokens` (about three bytes a token).
    return (size + 2) // 3


def _message_tokens(message: FrameworkMessage) -> int:
    if message.body is not None:
        return _tokens_of_size(message.body.size)
    return estimate_tokens(message.text or str(message.framework_item))


@dataclass(kw_only=True)
class SessionModel:
    """All durable state of one session."""

    messages: list[AgentMessage] = field(default_factory=lambda: [])
    state: AgentState = field(default_factory=AgentState)
    usage: AgentUsage = field(default_factory=AgentUsage)
    tool_calls: dict[str, AgentToolCall] = field(default_factory=lambda: {})
    run_state: str | None = None
    pending_interrupts: list[AgentInterrupt] = field(default_factory=lambda: [])
    queued: list[QueuedUserMessage] = field(default_factory=lambda: [])
    stopped: bool = False
    digest: str = ""
    """Rolling digest over every stored message, so a worker can check a cached prefix."""
    event_log: EventLog = field(default_factory=EventLog)
    model_step: str = ""
    """Step execution ID of the running (or last) model call, for the events it causes."""
    turn_settings: dict[str, Any] = field(default_factory=lambda: {})
    """Session settings of the running turn, from the message that started it."""
    cost: float = 0.0
    """Session cost so far, from usage and the budget's prices."""
    last_input_tokens: int = 0
    turn_started_at: str = ""
    turn_model_calls: int = 0
    turn_tool_calls: int = 0
    turn_continues: int = 0
    """Model steps of the running turn that asked for another model call (`ContinueRequested`)."""
    state_updates_applied_through: int = 0
    """Tool calls of the running turn (by `deferral_order`) whose state updates the current
    run state already holds; the next model step gets only the updates of later calls."""
    turn_fingerprints: list[str] = field(default_factory=lambda: [])
    consecutive_rejections: int = 0
    stop_reason: str | None = None
    stop_detail: str = ""
    memory: MemoryStore | None = None
    recent_message_ids: list[str] = field(default_factory=lambda: [])
    """IDs of the last messages accepted, so a retried send is not queued twice."""
    rejected_message_ids: list[str] = field(default_factory=lambda: [])
    """IDs of the last messages refused (double-texting `reject`): a retry is refused again."""
    double_texting: DoubleTexting = DoubleTexting.ENQUEUE
    """The session's double-texting policy, chosen when it started."""
    forked_from: ForkedFrom | None = None
    """Where the session was forked from, when it was (`fork_session`)."""
    turn_prefix_count: int = 0
    turn_prefix_digest: str = ""
    """Message count and rolling digest when the running turn began (its reference prefix)."""
    run_state_ref: BodyRef | None = None
    """The running turn's framework run state, when it was too large to keep inline."""
    index_ref: BodyRef | None = None
    index_count: int = 0
    index_digest: str = ""
    """The stored message index: messages 1..`index_count` (rolling digest `index_digest`),
    so a model step reads earlier messages from the store instead of from the workflow."""
    media: list[str] = field(default_factory=lambda: [])
    """Images of the session kept in the payload store, so any worker can copy them back."""
    carried_state: str | None = None
    """What the last completed turn carried into the next (`TurnCompleted.carry`); its
    preview when `carried_state_ref` is set. Only a completed turn changes it."""
    carried_state_ref: BodyRef | None = None
    """The carried state, when it was too large to keep inline."""
    framework_state: dict[str, Any] | None = None
    framework_state_omitted: list[str] = field(default_factory=lambda: [])
    """The framework's state after the last completed turn (`TurnCompleted.framework_state`),
    bounded, and the keys left out of it. Only a completed turn changes it."""

    # -- events --------------------------------------------------------------------------

    def emit(
        self, event_type: AgentEventType, data: dict[str, Any], *, step: str | None = None
    ) -> AgentEvent:
        turn_id = self.state.turn_id or ""
        return self.event_log.append(
            AgentEvent(
                type=event_type,
                turn_id=turn_id,
                step_execution_id=step if step is not None else self.model_step or f"{turn_id}/turn",
                attempt=1,
                data=data,
            )
        )

    @staticmethod
    def tool_step(turn_id: str, tool_call_id: str) -> str:
        """The step execution ID (activity ID) of one tool call."""
        return f"{turn_id}/tool/{tool_call_id}"

    @staticmethod
    def verify_step(turn_id: str, tool_call_id: str) -> str:
        """The step execution ID (activity ID) of the verify of one tool call."""
        return f"{turn_id}/verify/{tool_call_id}"

    # -- user messages -------------------------------------------------------------------

    @staticmethod
    def is_acceptable_text(text: str) -> bool:
        return bool(text.strip())

    def queue_user_message(self, message: QueuedUserMessage) -> bool:
        """Queue a message; False for blank text or a stopped session.

        A message whose `message_id` was accepted before is not queued again, and the
        answer is True: the earlier send already did what the retry asks.
        """
        if self.stopped or not self.is_acceptable_text(message.text):
            return False
        if message.message_id is not None:
            if message.message_id in self.recent_message_ids:
                return True
            self.recent_message_ids = [
                *self.recent_message_ids[-(RECENT_MESSAGE_IDS - 1) :],
                message.message_id,
            ]
        self.queued.append(message)
        return True

    def decide_user_message(
        self,
        message_id: str | None,
        policy: DoubleTexting | None,
        *,
        cancel_requested: bool,
    ) -> DoubleTextingAction:
        """What the session does with a message sent now (`decide_double_texting`).

        A message whose ID was decided before gets the same answer: queued (`QUEUE`,
        and `queue_user_message` then queues nothing) or refused (`REJECT`).
        """
        if message_id is not None:
            if message_id in self.recent_message_ids:
                return DoubleTextingAction.QUEUE
            if message_id in self.rejected_message_ids:
                return DoubleTextingAction.REJECT
        return decide_double_texting(
            self.double_texting,
            policy,
            turn_running=self.turn_active,
            cancel_requested=cancel_requested,
            queued=len(self.queued),
        )

    def reject_user_message(self, message_id: str | None) -> MessageRejectedError:
        """Remember a refused message's ID (so a retry is refused too); the error to report."""
        if message_id is not None and message_id not in self.rejected_message_ids:
            self.rejected_message_ids = [
                *self.rejected_message_ids[-(RECENT_MESSAGE_IDS - 1) :],
                message_id,
            ]
        return MessageRejectedError(
            "the session is busy (a turn runs or is about to start) and the message's "
            "double-texting policy is 'reject': nothing was queued"
        )

    def next_queued(self) -> QueuedUserMessage:
        if not self.queued:
            raise SessionStateError("no queued user message")
        return self.queued.pop(0)

    # -- turns ---------------------------------------------------------------------------

    @property
    def turn_active(self) -> bool:
        return self.state.turn_id is not None

    @property
    def next_sequence(self) -> int:
        return self.messages[-1].sequence + 1 if self.messages else 1

    def begin_turn(self, now: datetime | None = None) -> str:
        """Open the next turn and return its ID (`turn-<n>`)."""
        if self.turn_active:
            raise SessionStateError(f"turn {self.state.turn_id!r} is still running")
        number = self.state.turn_count + 1
        turn_id = f"turn-{number}"
        self.state = replace(self.state, status=AgentStatus.RUNNING_MODEL, turn_id=turn_id, turn_count=number)
        self.model_step = ""
        self.turn_started_at = _iso(now) if now is not None else ""
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
        self.emit(AgentEventType.TURN_STARTED, {"sequence": self.next_sequence}, step=f"{turn_id}/turn")
        return turn_id

    def load_history(self, messages: list[FrameworkMessage]) -> None:
        """Store the messages the session starts with, before its first turn, as if earlier
        turns had produced them: every model step sees them, reads list them."""
        if self.messages or self.turn_active:
            raise SessionStateError("a history is loaded only into a session with no messages")
        for message in messages:
            stored = AgentMessage(sequence=self.next_sequence, turn_id=HISTORY_TURN_ID, message=message)
            self.messages.append(stored)
            self.digest = message_digest(self.digest, stored)
        # No model call has measured the conversation yet: the budget's estimate of the first
        # call counts only that turn's messages on top of this, so it starts at the history.
        self.last_input_tokens = sum(_message_tokens(m) for m in messages)

    def _require_turn(self) -> str:
        turn_id = self.state.turn_id
        if turn_id is None:
            raise SessionStateError("no turn is running")
        return turn_id

    def append_message(self, message: FrameworkMessage) -> AgentMessage:
        stored = AgentMessage(sequence=self.next_sequence, turn_id=self._require_turn(), message=message)
        self.messages.append(stored)
        self.digest = message_digest(self.digest, stored)
        return stored

    def store_user_message(self, message: FrameworkMessage) -> AgentMessage:
        if message.role is not MessageRole.USER:
            raise SessionStateError(
                f"build_user_message returned role {message.role.value!r}, expected 'user'"
            )
        return self.append_message(message)

    def turn_messages(self) -> list[AgentMessage]:
        """Messages stored for the running turn (its user message, and any earlier note)."""
        turn_id = self._require_turn()
        tail: list[AgentMessage] = []
        for stored in reversed(self.messages):
            if stored.turn_id != turn_id:
                break
            tail.append(stored)
        tail.reverse()
        return tail

    def complete_turn(self, outcome: TurnCompleted, budget: Budget | None = None) -> None:
        """Append the turn's messages in one commit and wait for the next user message."""
        self._require_turn()
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
        self._end_turn(error=None)

    def record_usage(self, usage: AgentUsage, budget: Budget | None = None) -> None:
        self.usage = self.usage + usage
        if usage.input_tokens:
            self.last_input_tokens = usage.input_tokens
        if budget is not None:
            self.cost += budget.cost_of(usage.input_tokens, usage.output_tokens)
        self.emit(
            AgentEventType.USAGE_RECORDED,
            {"recorded": asdict(usage), "session": asdict(self.usage), "session_cost": self.cost},
        )

    # -- budgets -------------------------------------------------------------------------

    def budget_stop_before_model_call(
        self, budget: Budget | None, now: datetime
    ) -> tuple[StopReason, str] | None:
        """The budget the next model call would break, checked before the call is made."""
        if budget is None:
            return None
        if (
            budget.max_model_calls_per_turn is not None
            and self.turn_model_calls >= budget.max_model_calls_per_turn
        ):
            return StopReason.STEP_BUDGET, f"the turn made {self.turn_model_calls} model calls, the limit"
        if budget.max_turn_seconds is not None and self.turn_started_at:
            elapsed = (now - datetime.fromisoformat(self.turn_started_at)).total_seconds()
            if elapsed >= budget.max_turn_seconds:
                return (
                    StopReason.TIME_BUDGET,
                    f"the turn ran {elapsed:.0f} s of {budget.max_turn_seconds:.0f} s",
                )
        if budget.max_session_cost is not None:
            worst = budget.worst_case_next_call(self.estimated_next_input_tokens())
            if self.cost + worst > budget.max_session_cost:
                return StopReason.COST_BUDGET, (
                    f"the next call could cost {worst:.6f}, and the session has spent {self.cost:.6f} "
                    f"of {budget.max_session_cost:.6f}"
                )
        return None

    def estimated_next_input_tokens(self) -> int:
        """The last call's input plus everything added since, estimated generously."""
        added = 0
        turn_id = self.state.turn_id
        for stored in reversed(self.messages):
            if stored.turn_id != turn_id:
                break
            added += _message_tokens(stored.message)
        for record in self.tool_calls.values():
            output = (
                _tokens_of_size(record.output_ref.size)
                if record.output_ref
                else estimate_tokens(record.output or "")
            )
            added += output + estimate_tokens((record.error or "") + record.arguments)
        return self.last_input_tokens + added

    # -- the stored message index -----------------------------------------------------------

    def record_index(self, ref: BodyRef, count: int, digest: str) -> None:
        """The store now holds the index of messages 1..`count`; ignore one that is not newer."""
        if count <= self.index_count or count > len(self.messages):
            return
        if digest != self.messages_digest_at(count):
            raise SessionStateError(f"the stored index of {count} messages does not match the session")
        self.index_ref, self.index_count, self.index_digest = ref, count, digest

    def messages_digest_at(self, count: int) -> str:
        """Rolling digest of messages 1..`count`, from what the model keeps (no re-hash when it can)."""
        if count == len(self.messages):
            return self.digest
        if count == self.turn_prefix_count:
            return self.turn_prefix_digest
        if count == self.index_count:
            return self.index_digest
        digest = ""
        for stored in self.messages[:count]:
            digest = message_digest(digest, stored)
        return digest

    def messages_after_index(self) -> list[AgentMessage]:
        """Messages the stored index does not cover yet (a model step receives them inline)."""
        return self.messages[self.index_count :]

    def count_model_call(self) -> None:
        self.turn_model_calls += 1

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
        order = len(self.tool_calls)
        applied_through = order  # the step that made this batch applied every earlier update
        created: list[AgentToolCall] = []
        for call, decision, basis in zip(outcome.tool_calls, decisions, bases, strict=True):
            order += 1
            refusal = self._screen(call, budget)
            needs_approval = refusal is None and decision.waits
            interrupt_id = f"{turn_id}:{call.tool_call_id}" if needs_approval else None
            question = cap_text(call.question, MAX_ANSWER_BYTES, what="question") if call.question else None
            record = AgentToolCall(
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                arguments=call.arguments,
                policy=call.policy,
                deferral_order=order,
                status=AgentToolCallStatus.AWAITING_APPROVAL
                if needs_approval
                else AgentToolCallStatus.PENDING,
                interrupt_id=interrupt_id,
                approval_source=decision.source if needs_approval else None,
                framework_approval=call.framework_approval,
                question=question,
                verifiable=call.verifiable,
                verify_basis=basis,
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
            if refusal is not None:
                record = self.move_tool_call(call.tool_call_id, AgentToolCallStatus.REJECTED, error=refusal)
            elif interrupt_id is not None:
                self.pending_interrupts.append(
                    AgentInterrupt(
                        interrupt_id=interrupt_id,
                        turn_id=turn_id,
                        tool_call_id=call.tool_call_id,
                        tool_name=call.tool_name,
                        arguments=call.arguments,
                        raised_at=_iso(now),
                        deadline=_iso(now + deadline) if deadline is not None else None,
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

    def _screen(self, call: DeferredToolCall, budget: Budget | None) -> str | None:
        """The refusal (`<code>: <message>`) for one proposal, or None to accept it.

        Loop and budget checks apply when the session has a budget (guardrails on).
        """
        if call.proposal_error:
            self.consecutive_rejections += 1
            return call.proposal_error
        if budget is None:
            return None
        max_tools = budget.max_tool_calls_per_turn
        fingerprint = call_fingerprint(call.tool_name, call.arguments)
        if fingerprint in self.turn_fingerprints and not call.policy.allow_repeats:
            self.consecutive_rejections += 1
            self._request_stop(
                StopReason.REPEATED_CALL, f"{call.tool_name} was called again with the same arguments"
            )
            return f"{ProposalCode.REPEATED_CALL.value}: this exact call already ran in this turn"
        if max_tools is not None and self.turn_tool_calls >= max_tools:
            self._request_stop(
                StopReason.TOOL_BUDGET, f"the turn reached its limit of {max_tools} tool calls"
            )
            return f"{ProposalCode.TOOL_BUDGET.value}: the turn reached its limit of {max_tools} tool calls"
        self.consecutive_rejections = 0
        self.turn_fingerprints.append(fingerprint)
        self.turn_tool_calls += 1
        return None

    def _request_stop(self, reason: StopReason, detail: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason.value
            self.stop_detail = detail

    def tools_final(self) -> bool:
        return all(r.is_final for r in self.tool_calls.values())

    def resume_model(self) -> None:
        """All tool calls are final: the next model call continues the turn."""
        if not self.tools_final():
            raise SessionStateError("cannot resume the turn before every tool call is final")
        self.state = replace(self.state, status=AgentStatus.RUNNING_MODEL)

    def fail_turn(self, error: str, note: FrameworkMessage | None, *, reason: str = "error") -> None:
        """End the running turn with an error, leaving the failure note when one is given."""
        self._require_turn()
        if note is not None:
            self.store_user_message(note)
        turn_id = self._require_turn()
        self.emit(AgentEventType.TURN_FAILED, {"error": error, "reason": reason}, step=f"{turn_id}/turn")
        self._end_turn(error=error)

    def _end_turn(self, *, error: str | None) -> None:
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
        )

    # -- tool call records ---------------------------------------------------------------

    def model_step_tool_calls(self) -> list[AgentToolCall]:
        """The turn's tool call records for the next model step, without applied state updates."""
        return without_applied_updates(self.tool_calls.values(), self.state_updates_applied_through)

    def record(self, tool_call_id: str) -> AgentToolCall:
        try:
            return self.tool_calls[tool_call_id]
        except KeyError:
            raise SessionStateError(f"no tool call {tool_call_id!r} in the running turn") from None

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

    # -- guarded memory ------------------------------------------------------------------

    def run_memory_tool(self, record: AgentToolCall, now: datetime) -> AgentToolCall:
        """Run `remember`, `recall` or `forget` inside the session and record the outcome."""
        memory = self.memory
        if memory is None:
            raise SessionStateError("guarded memory is not enabled for this session")
        self.move_tool_call(record.tool_call_id, AgentToolCallStatus.RUNNING)
        arguments = tool_arguments_object(record.arguments) or {}
        key, text = str(arguments.get("key", "")), str(arguments.get("text", ""))
        owner = memory.owner
        if record.tool_name == "recall":
            output = MemoryStore.render(memory.recall(user=owner, now=now))
            return self.move_tool_call(record.tool_call_id, AgentToolCallStatus.SUCCEEDED, output=output)
        if record.tool_name == "remember":
            code = memory.write(key, text, source=f"model:{self._require_turn()}", user=owner, now=now)
        else:
            code = memory.forget(key, user=owner)
        if code is MemoryCode.OK:
            done = "remembered" if record.tool_name == "remember" else "forgot"
            return self.move_tool_call(
                record.tool_call_id, AgentToolCallStatus.SUCCEEDED, output=f"{done} {key!r}"
            )
        return self.move_tool_call(
            record.tool_call_id,
            AgentToolCallStatus.FAILED,
            error=f"memory {record.tool_name} refused: {code.value}",
        )

    # -- interrupts ----------------------------------------------------------------------

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

    # -- reads ---------------------------------------------------------------------------

    def snapshot(self, session_id: str, *, started: bool = True) -> AgentSnapshot:
        return AgentSnapshot(
            session_id=session_id,
            state=self.state if started else None,
            messages=bounded_messages(
                self.messages[-SNAPSHOT_MESSAGE_LIMIT:], SNAPSHOT_MESSAGE_BYTES, newest=True
            ),
            message_count=len(self.messages),
            pending_interrupts=[bounded_interrupt(i) for i in self.pending_interrupts],
            tool_calls=[
                bounded_tool_call(r) for r in sorted(self.tool_calls.values(), key=lambda r: r.deferral_order)
            ],
            usage=self.usage,
            queued_message_count=len(self.queued),
            stopped=self.stopped,
            carried_state_preview=carry_preview(self.carried_state),
            carried_state_by_reference=self.carried_state_ref is not None,
            framework_state=self.framework_state,
            framework_state_omitted=list(self.framework_state_omitted),
            double_texting=self.double_texting,
            forked_from=self.forked_from,
        )

    def page(self, *, after: int = 0, limit: int = 50) -> AgentMessagesPage:
        """Messages with a sequence above `after`, oldest first.

        The limit is clamped to 1..200, and a page holds at most `PAGE_BYTES` (always at
        least one message); a stored body appears as its preview.
        """
        limit = max(1, min(MAX_PAGE_SIZE, limit))
        start = self._index_after(after)
        chunk = bounded_messages(self.messages[start : start + limit], PAGE_BYTES, newest=False)
        more = start + len(chunk) < len(self.messages)
        return AgentMessagesPage(messages=chunk, next_after=chunk[-1].sequence if chunk and more else None)

    def _index_after(self, after: int) -> int:
        # Sequences are dense from the first stored one, so the index is arithmetic.
        if not self.messages:
            return 0
        first = self.messages[0].sequence
        return max(0, min(len(self.messages), after - first + 1))
