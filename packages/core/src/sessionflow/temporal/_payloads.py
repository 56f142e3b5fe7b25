"""Wire formats of the session workflow and its activities.

These shapes are recorded in workflow histories. Change them only together with a replay
test over recorded histories; add fields with defaults, never rename or remove.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sessionflow.session.bodies import BodyRef
from sessionflow.session.double_texting import DoubleTexting
from sessionflow.session.events import AgentEvent
from sessionflow.session.fork import ForkedFrom
from sessionflow.session.guardrails import Budget
from sessionflow.session.messages import AgentMessage, FrameworkMessage
from sessionflow.session.model import SessionModel
from sessionflow.session.options import SessionTimings
from sessionflow.session.outcomes import ContinueRequested, ToolCallsRequested, TurnCompleted
from sessionflow.session.tools import AgentToolCall
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyResult

# Activity, update and query names are part of recorded histories: keep them stable.
RUN_MODEL = "sessionflow.RunModel"
CALL_TOOL = "sessionflow.CallTool"
CALL_SINGLE_ATTEMPT_TOOL = "sessionflow.CallSingleAttemptTool"
BUILD_USER_MESSAGE = "sessionflow.BuildUserMessage"
VERIFY_TOOL = "sessionflow.VerifyTool"
FLOW_RUN_CONFIG = "sessionflow.FlowRunConfig"
"""Local activity: the run configuration of the session's flow, as the worker's flow says
(for a session started by a client that has only the flow type)."""
SEND_USER_MESSAGE = "send_user_message"
RESOLVE_INTERRUPT = "resolve_interrupt"
CANCEL_TURN = "cancel_turn"
STOP_SESSION = "stop_session"
GET_AGENT_SNAPSHOT = "get_agent_snapshot"
LIST_AGENT_MESSAGES = "list_agent_messages"
LIST_AGENT_EVENTS = "list_agent_events"
LIST_TURNS = "list_turns"
PUBLISH_DELTAS = "sessionflow.kit._deltas"
CHECK_VERSION = "sessionflow.check_version"
"""Signal that gives an idle session a workflow task, so it sees a new current worker version."""

PAYLOAD_VERSION = 6
"""2: bodies by reference (message bodies, tool outputs, run states) and a stored message
index. Version 1 sessions continue: their inline bodies stay inline, and their first
completed turn writes an index covering every earlier message.

3: continue steps (`RunModelResult.continued`, `RunModelInput.accepts_continue`,
`SessionRunConfig.max_continues_per_turn`). Only new fields with defaults, so version 2
histories replay and their sessions continue unchanged.

4: the rest of the runner contract for real agents (issue 20): tool state
(`ToolCallInput.run_state`/`run_state_ref`, `ToolCallOutput.state_update`/
`state_update_ref`), the framework's own approvals and questions
(`RunModelInput.accepts_asks`, the new record and interrupt fields), carry between turns
(`RunModelInput.carried_state`/`carried_state_ref`, `TurnCompleted.carry`/`carry_ref`),
and verified outcomes (the `sessionflow.VerifyTool` activity and `VerifyToolOutput`,
behind the patch marker ``sessionflow-verify``). Again only new fields with defaults and
one patched branch, so version 3 histories replay and their sessions continue.

5: compact JSON (`_compact_payloads`: a dataclass field holding its absent default is left
out), `AgentToolCall.skip_run_state` (a call whose tool step gets no run state), and a
user message the client built (`SendUserMessageRequest.message`,
`SessionStartInput.initial_user_message`): the turn then runs no `BuildUserMessage` step.
A version 4 workflow ignores the message and runs the step. The
same format for Temporal's decoder, which fills a missing field with its default: version 4
workers read version 5 payloads and the reverse, and the recorded `compact-payloads`
history replays on Temporal's default converter. From here on, a field whose default is an
absence (None, False, 0, "", empty) keeps that default for good.

6: a session can start from an existing history (`SessionStartInput.history`, and
`history_index_ref`: the index chunk the client wrote for it, so the first turn's model
steps read the history by reference). Both default to an absence: version 5 histories
decode, take the same path and replay. A version 5 worker ignores the fields and starts
the session without the history, so upgrade workers before clients pass `history=`."""


@dataclass(frozen=True, kw_only=True)
class MemorySettings:
    max_notes: int
    max_chars: int
    ttl_seconds: float | None


@dataclass(frozen=True, kw_only=True)
class SessionRunConfig:
    """What one session runs under, fixed by its flow when the session starts.

    The step timeouts and attempts of `SessionTimings` (in seconds, because the default JSON
    converter has no timedelta), the interrupt deadline, when to continue as new, how many
    bytes of events to retain, the budget and the memory settings. It travels as
    `SessionStartInput.timings`; its JSON form is the one the older name, `WorkflowTimings`, had.
    """

    model_start_to_close: float
    model_heartbeat_timeout: float
    model_schedule_to_close: float
    model_max_attempts: int
    tool_start_to_close: float
    tool_heartbeat_timeout: float
    tool_schedule_to_close: float
    tool_max_attempts: int
    retry_initial_interval: float
    heartbeat_interval: float
    interrupt_deadline: float | None = None
    continue_as_new_after_events: int = 10_000
    event_retention_bytes: int = 1024 * 1024
    budget: Budget | None = None
    memory: MemorySettings | None = None
    max_continues_per_turn: int = 8
    """Recorded configs before continue steps lack it: they get the default."""
    model_name: str | None = None
    """The flow's model, for step summaries in the Temporal UI (a turn's ``model`` setting wins)."""
    search_attributes: bool = False
    """The client found sessionflow's search attributes registered: the session keeps them current."""
    steering: bool = False
    """The flow's runner takes steered messages (`AgentFrameworkRunner.accepts_steering`);
    without it a message sent under double-texting `steer` is queued for the next turn."""

    @staticmethod
    def from_timings(
        timings: SessionTimings,
        *,
        continue_as_new_after_events: int = 10_000,
        event_retention_bytes: int = 1024 * 1024,
        budget: Budget | None = None,
        memory: MemorySettings | None = None,
        max_continues_per_turn: int = 8,
        model_name: str | None = None,
        steering: bool = False,
    ) -> SessionRunConfig:
        def secs(value: timedelta) -> float:
            return value.total_seconds()

        return SessionRunConfig(
            model_start_to_close=secs(timings.model_start_to_close),
            model_heartbeat_timeout=secs(timings.model_heartbeat_timeout),
            model_schedule_to_close=secs(timings.model_schedule_to_close),
            model_max_attempts=timings.model_max_attempts,
            tool_start_to_close=secs(timings.tool_start_to_close),
            tool_heartbeat_timeout=secs(timings.tool_heartbeat_timeout),
            tool_schedule_to_close=secs(timings.tool_schedule_to_close),
            tool_max_attempts=timings.tool_max_attempts,
            retry_initial_interval=secs(timings.retry_initial_interval),
            heartbeat_interval=secs(timings.heartbeat_interval),
            interrupt_deadline=secs(timings.interrupt_deadline) if timings.interrupt_deadline else None,
            continue_as_new_after_events=continue_as_new_after_events,
            event_retention_bytes=event_retention_bytes,
            budget=budget,
            memory=memory,
            max_continues_per_turn=max_continues_per_turn,
            model_name=model_name,
            steering=steering,
        )


@dataclass(frozen=True, kw_only=True)
class SessionStartInput:
    """Input of the session workflow. `carried` is set only by continue-as-new."""

    timings: SessionRunConfig | None = None  # the field keeps its name: it is a key of recorded payloads
    """None when the client had only the flow type: the first run asks its worker's flow
    (`FLOW_RUN_CONFIG`), and continue-as-new carries what it answered."""
    initial_message: str | None = None
    initial_settings: dict[str, Any] = field(default_factory=lambda: {})
    environment: dict[str, str] = field(default_factory=lambda: {})
    session_nonce: str | None = None
    carried: SessionModel | None = None
    event_offset: int = 0
    version: int = PAYLOAD_VERSION
    initial_user_message: FrameworkMessage | None = None
    """`initial_message` as the flow's runner builds it, built by the client."""
    history: list[FrameworkMessage] = field(default_factory=lambda: [])
    """Messages the session starts with, as the session keeps them (large bodies by reference)."""
    history_index_ref: BodyRef | None = None
    """The stored index chunk of `history` (messages 1..len(history)), when the client has a store."""
    double_texting: DoubleTexting | None = None
    """The session's double-texting policy; None (inputs recorded before it): `enqueue`."""
    forked_from: ForkedFrom | None = None
    """Set when the session is a fork (`fork_session`): its `history` is that session's turns."""
    search_attributes: bool = False
    """With no `timings`: the client found sessionflow's search attributes registered, so the
    configuration the worker's flow gives is used with `SessionRunConfig.search_attributes`."""


@dataclass(frozen=True, kw_only=True)
class BuildUserMessageInput:
    text: str
    images: list[str] = field(default_factory=lambda: [])


@dataclass(frozen=True, kw_only=True)
class RunModelInput:
    """One model call. Only messages the stored index does not cover travel; the rest is referenced.

    The worker rebuilds messages 1..`prefix_count` from its cache, checked against
    `prefix_digest`, or reads them from the store through the index chunk `prefix_ref`, so
    a turn adds history bytes that do not grow with the session's length. Inputs recorded
    before version 2 have no `prefix_ref`; their prefix is read from the workflow.
    """

    session_id: str
    session_nonce: str
    turn_id: str
    framework_run_state: str | None
    tool_calls: list[AgentToolCall]
    tail: list[AgentMessage]
    prefix_count: int
    prefix_digest: str
    heartbeat_interval: float
    session_settings: dict[str, Any] = field(default_factory=lambda: {})
    prefix_ref: BodyRef | None = None
    framework_run_state_ref: BodyRef | None = None
    media: list[str] = field(default_factory=lambda: [])
    """The session's images in the payload store: the step makes sure this worker has them."""
    accepts_continue: bool = False
    """The workflow handles `RunModelResult.continued`. A workflow built before continue
    steps sends no such field, so a newer worker refuses a `ContinueRequested` with a clear
    error instead of returning a result that workflow cannot read."""
    carried_state: str | None = None
    """What the last completed turn carried (`TurnCompleted.carry`), when kept inline."""
    carried_state_ref: BodyRef | None = None
    """The carried state in the payload store, when it was large; the step reads it whole."""
    accepts_asks: bool = False
    """The workflow reads `DeferredToolCall.framework_approval` and `question`. A workflow
    built before them sends no such field; a newer worker then turns every call the
    framework asks about into an explicit approval (`as_session_approval`), so that workflow
    still waits for a person instead of running the call unasked."""
    steered: list[FrameworkMessage] = field(default_factory=lambda: [])
    """User messages that joined the turn just before this step (`AgentTurnContext.steered_messages`)."""


@dataclass(frozen=True, kw_only=True)
class RunModelResult:
    """The step's outcome; a completed turn also names the index chunk that now covers it."""

    completed: TurnCompleted | None = None
    requested: ToolCallsRequested | None = None
    continued: ContinueRequested | None = None
    index_ref: BodyRef | None = None
    index_count: int = 0
    index_digest: str = ""
    step_text: str = ""
    """What the model wrote in this step (the text its attempt streamed), at most
    `STEP_TEXT_CHARS`, for the turn's record; steps recorded before it have none."""


@dataclass(frozen=True, kw_only=True)
class MessageIndexChunk:
    """One link of a session's stored message index: messages `first`.. and the link before.

    Chunks are immutable and content-addressed; a reader walks `parent` links back to the
    first message. One chunk is written per completed turn.
    """

    first: int
    entries: list[AgentMessage]
    parent: BodyRef | None = None


@dataclass(frozen=True, kw_only=True)
class ToolCallInput:
    session_id: str
    turn_id: str
    tool_call: AgentToolCall
    heartbeat_interval: float
    session_settings: dict[str, Any] = field(default_factory=lambda: {})
    run_state: str | None = None
    """The run state of the model step that deferred the call, when it is kept inline (small)."""
    run_state_ref: BodyRef | None = None
    """That run state when it is stored: the step loads it, so a large state is never inline."""


@dataclass(frozen=True, kw_only=True)
class ToolCallOutput:
    """`error` is set when the tool raised ToolExecutionError; otherwise `output`."""

    output: str | None = None
    error: str | None = None
    output_ref: BodyRef | None = None
    """The whole output when it was stored; `output` is then its preview."""
    state_update: str | None = None
    """The tool's state update (`ToolExecutionResult.state_update`), when small enough to keep inline."""
    state_update_ref: BodyRef | None = None
    """The update when it was stored; `state_update` is then None."""
    rebound_arguments: str | None = None
    """The framework rewrote the approved arguments to these (canonical JSON) in the step,
    and the tool did not run: the call asks for approval again (`rebind_approval`)."""


@dataclass(frozen=True, kw_only=True)
class VerifyToolOutput:
    """What the verify step found about a write whose step died (its input is the write's `ToolCallInput`).

    `answer` is ``succeeded`` (with `output`, or its preview and `output_ref` when it was
    stored), ``failed`` (with `message`) or ``unknown`` (with `message` as the reason).
    """

    answer: str
    output: str | None = None
    output_ref: BodyRef | None = None
    message: str = ""

    def result(self) -> VerifyResult:
        if self.answer == "succeeded":
            return TookEffect(output=self.output or "")
        if self.answer == "failed":
            return NoEffect(message=self.message)
        return EffectUnknown(reason=self.message)


@dataclass(frozen=True, kw_only=True)
class SendUserMessageRequest:
    text: str
    images: list[str] = field(default_factory=lambda: [])
    settings: dict[str, Any] = field(default_factory=lambda: {})
    message_id: str | None = None
    message: FrameworkMessage | None = None
    """`text` as the flow's runner builds it, built by the client (see `QueuedUserMessage.message`)."""
    double_texting: DoubleTexting | None = None
    """This message's double-texting policy; None (and requests recorded before it): the session's."""


@dataclass(frozen=True, kw_only=True)
class ResolveInterruptRequest:
    interrupt_id: str
    approved: bool
    rejection_message: str | None = None
    answer: str | None = None
    digest: str | None = None
    """The interrupt's `digest` as the person saw it; another digest is refused."""
    answered_by: str | None = None
    """Who answered, for the approval record."""


@dataclass(frozen=True, kw_only=True)
class ListAgentMessagesRequest:
    after: int = 0
    limit: int = 50
    hide_superseded: bool = False
    """Leave out messages the framework's history no longer holds. False (and requests
    made before it): every stored message, as a worker's message cache needs them."""


@dataclass(frozen=True, kw_only=True)
class ListAgentEventsRequest:
    after: int = 0
    limit: int = 500


@dataclass(frozen=True, kw_only=True)
class DeltaBatch:
    """Deltas sent to the workflow when no side transport reaches a subscriber."""

    events: list[AgentEvent]
