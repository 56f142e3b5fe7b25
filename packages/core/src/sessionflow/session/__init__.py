"""The pure session model: records, statuses, policies and the turn state machine. No I/O."""

from sessionflow.session.approvals import (
    MAX_ANSWER_BYTES,
    ApprovalDecision,
    InvalidAnswerError,
    check_answer,
    decide_approval,
)
from sessionflow.session.bodies import BodyRef, is_media_ref
from sessionflow.session.errors import (
    InvalidToolCallError,
    SessionError,
    SessionRunError,
    SessionStateError,
    TurnAborted,
    UnsupportedOptionError,
    UserError,
)
from sessionflow.session.events import (
    AgentEvent,
    AgentEventsPage,
    AgentEventType,
    AgentEventWriter,
    EventLog,
    EventSink,
)
from sessionflow.session.guardrails import Budget, ProposalCode, StopReason, call_fingerprint
from sessionflow.session.invocation import ToolInvocation
from sessionflow.session.live_text import LiveText
from sessionflow.session.memory import MEMORY_TOOL_NAMES, MemoryCode, MemoryNote, MemoryStore
from sessionflow.session.messages import (
    AgentMessage,
    FrameworkMessage,
    MessageRole,
    message_digest,
    message_sequence_key,
)
from sessionflow.session.model import HISTORY_TURN_ID, QueuedUserMessage, SessionModel
from sessionflow.session.notes import build_turn_failure_note
from sessionflow.session.options import (
    AgentSessionOptions,
    CallPolicy,
    MemoryOptions,
    SessionBudget,
    SessionTimings,
)
from sessionflow.session.outcomes import (
    AgentTurnOutcome,
    ContinueRequested,
    ToolCallsRequested,
    TurnCompleted,
)
from sessionflow.session.runner import (
    AgentFrameworkRunner,
    AgentTurnContext,
    DeferredToolExecution,
    ImageInput,
    idempotency_key,
)
from sessionflow.session.state import (
    AgentInterrupt,
    AgentMessagesPage,
    AgentSnapshot,
    AgentState,
    AgentStatus,
    InterruptKind,
)
from sessionflow.session.tools import (
    AgentToolCall,
    AgentToolCallStatus,
    ApprovalSource,
    DeferredToolCall,
    FrameworkApproval,
    ToolEffect,
    ToolExecutionError,
    ToolExecutionResult,
    ToolPolicy,
    describe_tool_call_outcome,
    parse_tool_arguments,
    tool_arguments_object,
    validate_tool_call_ids,
)
from sessionflow.session.usage import AgentUsage
from sessionflow.session.value_changes import apply_value_change, value_change
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyCall, VerifyResult

__all__ = [
    "HISTORY_TURN_ID",
    "MAX_ANSWER_BYTES",
    "MEMORY_TOOL_NAMES",
    "AgentEvent",
    "AgentEventType",
    "AgentEventWriter",
    "AgentEventsPage",
    "AgentFrameworkRunner",
    "AgentInterrupt",
    "AgentMessage",
    "AgentMessagesPage",
    "AgentSessionOptions",
    "AgentSnapshot",
    "AgentState",
    "AgentStatus",
    "AgentToolCall",
    "AgentToolCallStatus",
    "AgentTurnContext",
    "AgentTurnOutcome",
    "AgentUsage",
    "ApprovalDecision",
    "ApprovalSource",
    "BodyRef",
    "Budget",
    "CallPolicy",
    "ContinueRequested",
    "DeferredToolCall",
    "DeferredToolExecution",
    "EffectUnknown",
    "EventLog",
    "EventSink",
    "FrameworkApproval",
    "FrameworkMessage",
    "ImageInput",
    "InterruptKind",
    "InvalidAnswerError",
    "InvalidToolCallError",
    "LiveText",
    "MemoryCode",
    "MemoryNote",
    "MemoryOptions",
    "MemoryStore",
    "MessageRole",
    "NoEffect",
    "ProposalCode",
    "QueuedUserMessage",
    "SessionBudget",
    "SessionError",
    "SessionModel",
    "SessionRunError",
    "SessionStateError",
    "SessionTimings",
    "StopReason",
    "TookEffect",
    "ToolCallsRequested",
    "ToolEffect",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolInvocation",
    "ToolPolicy",
    "TurnAborted",
    "TurnCompleted",
    "UnsupportedOptionError",
    "UserError",
    "VerifyCall",
    "VerifyResult",
    "apply_value_change",
    "build_turn_failure_note",
    "call_fingerprint",
    "check_answer",
    "decide_approval",
    "describe_tool_call_outcome",
    "idempotency_key",
    "is_media_ref",
    "message_digest",
    "message_sequence_key",
    "parse_tool_arguments",
    "tool_arguments_object",
    "validate_tool_call_ids",
    "value_change",
]
