"""The durable fields of a session: what `SessionModel` holds and continue-as-new carries.

`SessionFields` is a flat dataclass and its field names are a recorded payload format
(`SessionStartInput.carried`): add fields with defaults, never rename, move or nest one.
The concepts that change these fields (`turn_machine`, `tool_call_records`, `interrupts`,
`inbox`, ...) are behaviour-only subclasses that add no field, so the payload stays this
one flat object. Here too are the few primitives every concept needs: the event log and
the running turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessionflow.session.bodies import BodyRef
from sessionflow.session.double_texting import DoubleTexting
from sessionflow.session.errors import SessionStateError
from sessionflow.session.events import AgentEvent, AgentEventType, EventLog
from sessionflow.session.fork import ForkedFrom
from sessionflow.session.memory import MemoryStore
from sessionflow.session.messages import AgentMessage
from sessionflow.session.queued_message import QueuedUserMessage
from sessionflow.session.state import AgentInterrupt, AgentState
from sessionflow.session.steered_message import SteeredMessage
from sessionflow.session.superseded import SupersededRange
from sessionflow.session.tools import AgentToolCall
from sessionflow.session.turn_records import TurnRecord, TurnStep
from sessionflow.session.usage import AgentUsage

__all__ = ["SessionFields"]


@dataclass(kw_only=True)
class SessionFields:
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
    superseded: list[SupersededRange] = field(default_factory=lambda: [])
    """Stored messages the framework's history no longer holds (`TurnCompleted.superseded`),
    as sorted, disjoint ranges: reads leave them out unless asked for them."""
    turn_records: list[TurnRecord] = field(default_factory=lambda: [])
    """The newest ended turns' records (`sessionflow.session.turn_records`), oldest first."""
    turn_steps: list[TurnStep] = field(default_factory=lambda: [])
    """The running turn's model steps that ended, for its record (the newest, bounded)."""
    turn_steps_dropped: int = 0
    """The running turn's older steps no longer in `turn_steps`."""
    turn_tool_times: dict[str, list[str]] = field(default_factory=lambda: {})
    """When each tool call of the running turn started and ended its step (ISO 8601)."""
    turn_message_id: str | None = None
    turn_user_sequence: int | None = None
    turn_usage_start: AgentUsage | None = None
    turn_cost_start: float | None = None
    """The running turn's message ID, user message, and the session's usage and cost when
    it began (its record's usage is the difference; None: nothing yet, as in runs carried
    before turn records, so their payloads keep their bytes)."""
    steered: list[QueuedUserMessage] = field(default_factory=lambda: [])
    """Messages sent to steer the running turn (double-texting `steer`) that no model step
    took yet, oldest first: the next model step of the turn takes them all."""
    turn_steered: list[SteeredMessage] = field(default_factory=lambda: [])
    """The messages that joined the running turn, as its model steps got them."""

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

    # -- the running turn ----------------------------------------------------------------

    @property
    def turn_active(self) -> bool:
        return self.state.turn_id is not None

    def _require_turn(self) -> str:
        turn_id = self.state.turn_id
        if turn_id is None:
            raise SessionStateError("no turn is running")
        return turn_id
